// Package httpserver runs ferry's HTTP handlers (Streamable HTTP, HTTP+SSE)
// on an [http.Server] with the bounds a server reachable by clients it
// does not control needs: how long a client may take to send its headers
// and its body, how long an idle kept-alive connection is held, how large
// its headers may be, and how many connections are open at once.
//
// The handlers bound what they wait for themselves as well (each write of
// an answer or of an event, the reading of a body; see
// [github.com/ferrymcp/ferry/transport/streamable.Options]), so that a
// program that brings its own http.Server is not defenceless; this
// package adds what only the server can bound. A program with its own
// server should set at least ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes, and wrap its listener with [LimitListener]: see the
// package's example.
package httpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options bound what a client can make the server hold. The zero value
// is usable: every field has a default, and a negative duration means no
// bound.
type Options struct {
	// ReadHeaderTimeout bounds the reading of a request's headers
	// (default 10 seconds).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the reading of a whole request, headers and body
	// (default 60 seconds). It does not limit how long a handler runs or
	// streams: net/http lifts it once the body was read.
	ReadTimeout time.Duration
	// WriteTimeout bounds the writing of an answer, counted from the end
	// of the request's headers (default 60 seconds). ferry's handlers move
	// it forward at each write of an event stream, which may thus last for
	// hours as long as the client reads it; another handler on the same
	// server that streams must do the same (with
	// http.ResponseController.SetWriteDeadline) or be cut.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a kept-alive connection waits for its
	// next request (default 60 seconds).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the size of a request's headers (default
	// 64 KiB; net/http's own default is 1 MiB).
	MaxHeaderBytes int
	// MaxConns bounds the connections open at once (default 1024): beyond
	// it, new connections wait in the system's queue until one closes.
	// Each stream a client keeps open (a legacy GET stream, a
	// subscriptions/listen request) holds a connection.
	MaxConns int
	// ShutdownTimeout bounds how long [Serve] waits, once its context
	// ends, for the requests in flight (default 5 seconds).
	ShutdownTimeout time.Duration
}

// Defaults of [Options].
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 60 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConns          = 1024
	DefaultShutdownTimeout   = 5 * time.Second
)

func (o *Options) withDefaults() Options {
	var out Options
	if o != nil {
		out = *o
	}
	// net/http takes a negative duration as no bound, and zero as
	// another's value (IdleTimeout and ReadHeaderTimeout fall back on
	// ReadTimeout): negative ones are passed on as they are.
	dur := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	dur(&out.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	dur(&out.ReadTimeout, DefaultReadTimeout)
	dur(&out.WriteTimeout, DefaultWriteTimeout)
	dur(&out.IdleTimeout, DefaultIdleTimeout)
	dur(&out.ShutdownTimeout, DefaultShutdownTimeout)
	if out.MaxHeaderBytes <= 0 {
		out.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if out.MaxConns <= 0 {
		out.MaxConns = DefaultMaxConns
	}
	return out
}

// New returns a server for h with the bounds of opts; serve it on a
// listener wrapped with [LimitListener] (as [Serve] does) to bound the
// connections too.
func New(h http.Handler, opts *Options) *http.Server {
	o := opts.withDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
	}
}

// Serve serves h on l, with the bounds of opts, until ctx ends; it then
// shuts the server down, waiting up to ShutdownTimeout for the requests
// in flight (close the MCP handlers first, so that their streams end).
// It returns nil after a shutdown, else the error that stopped the
// server.
func Serve(ctx context.Context, l net.Listener, h http.Handler, opts *Options) error {
	o := opts.withDefaults()
	srv := New(h, &o)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(LimitListener(l, o.MaxConns)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	<-errc
	return err
}

// LimitListener returns a listener that accepts at most n connections at
// once: Accept waits while n are open.
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()

	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when it closes.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// CloseWrite passes on the connection's, which net/http uses to close a
// connection gracefully.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()

	c.once.Do(c.release)
	return err
}
