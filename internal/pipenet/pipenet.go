// Package pipenet is a listener of in-memory connections (net.Pipe), for
// tests that run an HTTP server inside a testing/synctest bubble, on its
// fake clock: a bound of minutes is then checked in microseconds. The
// connections are unbuffered: a write waits for the other side to read,
// as a write to a client that stopped reading does once the system's
// buffers are full.
package pipenet

import (
	"net"
	"sync"
)

// Listener hands out the server's ends of the connections made by Dial.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// Listen returns a new listener.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept returns the server's end of the next connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is a loopback address, so that the handlers' checks against DNS
// rebinding see a server on loopback.
func (l *Listener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// Dial returns the client's end of a new connection, which the server
// accepts when it has room.
func (l *Listener) Dial() net.Conn {
	client, srv := net.Pipe()
	srv = &loopConn{srv}
	go func() {
		select {
		case l.conns <- srv:
		case <-l.closed:
			srv.Close()
		}
	}()
	return client
}

// loopConn reports loopback addresses (a pipe's are "pipe").
type loopConn struct{ net.Conn }

func (c *loopConn) LocalAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
}

func (c *loopConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
