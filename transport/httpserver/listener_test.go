package httpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/transport/httpserver"
)

// addrNet is a listener of in-memory connections from remote addresses
// the test names (a pipenet connection is always from 127.0.0.1).
type addrNet struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newAddrNet() *addrNet {
	return &addrNet{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (n *addrNet) Accept() (net.Conn, error) {
	select {
	case c := <-n.conns:
		return c, nil
	case <-n.closed:
		return nil, net.ErrClosed
	}
}

func (n *addrNet) Close() error {
	n.once.Do(func() { close(n.closed) })
	return nil
}

func (n *addrNet) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// Dial returns the client's end of a connection from ip, accepted when
// the server has room.
func (n *addrNet) Dial(ip string) net.Conn {
	client, srv := net.Pipe()
	go func() {
		select {
		case n.conns <- &remoteConn{Conn: srv, ip: net.ParseIP(ip)}:
		case <-n.closed:
			srv.Close()
		}
	}()
	return client
}

type remoteConn struct {
	net.Conn
	ip net.IP
}

func (c *remoteConn) RemoteAddr() net.Addr { return &net.TCPAddr{IP: c.ip, Port: 40000} }

// closedNow reports whether the server closed c, without waiting.
func closedNow(c net.Conn) bool {
	c.SetReadDeadline(time.Now())
	_, err := c.Read(make([]byte, 1))
	c.SetReadDeadline(time.Time{})
	return err == io.EOF
}

// get sends a GET for path on c and returns the answer's status, with
// the fake time it took.
func get(c net.Conn, path string, header string) (string, time.Duration) {
	start := time.Now()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", path, header)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err.Error(), time.Since(start)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.Status, time.Since(start)
}

// serveOn serves h on l until the returned function is called.
func serveOn(t *testing.T, l net.Listener, h http.Handler, opts *httpserver.Options) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- httpserver.Serve(ctx, l, h, opts) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("ok"))
})

// TestAddressShare: a client that opens MaxConns idle connections holds
// only its address's share (half by default); the ones beyond it are
// closed at once, and a client from another address is served at once.
func TestAddressShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newAddrNet()
		stop := serveOn(t, n, okHandler, &httpserver.Options{MaxConns: 4})
		defer stop()
		var held []net.Conn
		for range 4 {
			held = append(held, n.Dial("192.0.2.1"))
			synctest.Wait()
		}
		closed := 0
		for _, c := range held {
			if closedNow(c) {
				closed++
			}
		}
		if closed != 2 {
			t.Errorf("%d of the 4 connections of one address were closed at once, want 2 (its share is half of MaxConns)", closed)
		}
		for i := range 2 {
			c := n.Dial("198.51.100.7")
			status, took := get(c, "/", "")
			if status != "200 OK" || took > 0 {
				t.Errorf("another address's connection %d: %s after %v, want 200 OK at once", i, status, took)
			}
			defer c.Close()
		}
		for _, c := range held {
			c.Close()
		}
	})
}

// authHandler authenticates a request with "Authorization: NAME" as NAME;
// one without is let through unauthenticated (a health check).
var authHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if caller := r.Header.Get("Authorization"); caller != "" && !httpserver.Authenticated(r.Context(), caller) {
		w.Header().Set("Connection", "close")
		http.Error(w, "too many connections", http.StatusTooManyRequests)
		return
	}
	w.Write([]byte("ok"))
})

// TestEvictUnauthenticated: with the server full, or an address's share
// reached, a new connection takes the place of the oldest one not
// authenticated and not being served; authenticated connections keep
// theirs, and count against their caller's share instead of their
// address's (all of them are from loopback here).
func TestEvictUnauthenticated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newAddrNet()
		stop := serveOn(t, n, authHandler, &httpserver.Options{MaxConns: 4, EvictUnauthenticated: true, IdleTimeout: -1})
		defer stop()
		dial := func(header string) net.Conn {
			c := n.Dial("127.0.0.1")
			t.Cleanup(func() { c.Close() })
			if status, took := get(c, "/", header); status != "200 OK" || took > 0 {
				t.Errorf("a connection with %q: %s after %v, want 200 OK at once", header, status, took)
			}
			return c
		}
		alice := dial("Authorization: alice\r\n")
		dial("Authorization: alice\r\n")
		idle := []net.Conn{dial(""), dial("")} // the address's share, and the last places
		dial("Authorization: bob\r\n")         // the address is at its share
		if !closedNow(idle[0]) || closedNow(idle[1]) {
			t.Errorf("after bob: evicted %v, %v; want the oldest unauthenticated only", closedNow(idle[0]), closedNow(idle[1]))
		}
		third := n.Dial("127.0.0.1") // the server is full
		defer third.Close()
		if status, _ := get(third, "/", "Authorization: alice\r\n"); status != "429 Too Many Requests" {
			t.Errorf("alice's third connection, beyond her share of 2: %s", status)
		}
		if !closedNow(idle[1]) {
			t.Error("the second unauthenticated connection was not evicted for a new one")
		}
		if status, _ := get(alice, "/", "Authorization: alice\r\n"); status != "200 OK" {
			t.Errorf("alice's connection after the evictions: %s", status)
		}
	})
}
