// Package httpserver runs ferry's HTTP handlers (Streamable HTTP, HTTP+SSE)
// on an [http.Server] with the bounds a server reachable by clients it
// does not control needs: how long a client may take to send its headers
// and its body, how long an idle kept-alive connection is held, how large
// its headers may be, and how many connections are open at once, in all
// and per client.
//
// The connection bounds ([Options], [NewListener]), so that no client
// can take the places every other client needs:
//
//   - MaxConns (default 1,024): connections open at once; beyond it a
//     new connection waits in the system's queue.
//   - MaxConnsPerAddr (default half of MaxConns): the share of one
//     remote address, or of one caller once a request on the connection
//     was authenticated ([Authenticated]); beyond it a new connection is
//     closed at once.
//   - EvictUnauthenticated (off; the gateway turns it on when it
//     authenticates): a connection not yet authenticated and not being
//     served gives up its place to a new one when either bound is
//     reached.
//   - ReadHeaderTimeout (10 s) bounds a connection that sends nothing,
//     IdleTimeout (60 s) one kept alive between requests.
//
// The handlers bound what they wait for themselves as well (each write of
// an answer or of an event, the reading of a body; see
// [github.com/ferrymcp/ferry/transport/streamablehandler.Options]), so that a
// program that brings its own http.Server is not defenceless; this
// package adds what only the server can bound. A program with its own
// server should set at least ReadHeaderTimeout, IdleTimeout and
// MaxHeaderBytes, and wrap its listener with [NewListener]: see the
// package's example.
package httpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
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
	// MaxConnsPerAddr bounds the connections of MaxConns one remote
	// address holds (default half of MaxConns; an IPv6 address counts as
	// its /64 network): beyond it a new connection from that address is
	// closed at once, so that one client cannot take every place. A
	// connection on which a request was authenticated ([Authenticated])
	// counts against its caller's share, of the same size, instead.
	// Clients behind one proxy or NAT, or many test clients, share an
	// address: raise it up to MaxConns (no share) for them.
	MaxConnsPerAddr int
	// EvictUnauthenticated lets a new connection, when MaxConns or its
	// address's share is reached, take the place of the oldest connection
	// on which no request was authenticated and that is not being served
	// (idle, or its headers still coming). For a server whose
	// authentication middleware calls [Authenticated] (the gateway's
	// does): a client without credentials then holds only places no
	// other client needs.
	EvictUnauthenticated bool
	// ShutdownTimeout bounds how long [Serve] waits, once its context
	// ends, for the requests in flight (default 5 seconds).
	ShutdownTimeout time.Duration
}

// Defaults of [Options], as its fields document them.
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = 60 * time.Second
	defaultWriteTimeout      = 60 * time.Second
	defaultIdleTimeout       = 60 * time.Second
	defaultMaxHeaderBytes    = 64 << 10
	defaultMaxConns          = 1024
	defaultShutdownTimeout   = 5 * time.Second
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
	dur(&out.ReadHeaderTimeout, defaultReadHeaderTimeout)
	dur(&out.ReadTimeout, defaultReadTimeout)
	dur(&out.WriteTimeout, defaultWriteTimeout)
	dur(&out.IdleTimeout, defaultIdleTimeout)
	dur(&out.ShutdownTimeout, defaultShutdownTimeout)
	if out.MaxHeaderBytes <= 0 {
		out.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if out.MaxConns <= 0 {
		out.MaxConns = defaultMaxConns
	}
	if out.MaxConnsPerAddr <= 0 {
		out.MaxConnsPerAddr = max(out.MaxConns/2, 1)
	}
	return out
}

// New returns a server for h with the bounds of opts; serve it on a
// listener of [NewListener] (as [Serve] does) to bound the connections
// too.
func New(h http.Handler, opts *Options) *http.Server {
	o := opts.withDefaults()
	return &http.Server{
		Handler:           serving(h),
		ConnContext:       connContext,
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
	go func() { errc <- srv.Serve(NewListener(l, &o)) }()
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
