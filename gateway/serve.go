package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

// ServeOptions bound the HTTP server of [Gateway.Serve]. The zero value
// is usable.
type ServeOptions struct {
	// Drain is how long requests in flight may run on once the gateway
	// stops accepting them (default 10 seconds).
	Drain time.Duration
	// DrainNotice is how long the gateway, once told to stop, serves on
	// as before, new requests included, with /readyz answering 503, so
	// that a balancer checking /readyz stops sending it requests before
	// it stops accepting them (default 0: it stops accepting at once).
	// Behind a balancer, make it longer than the balancer takes to see a
	// replica down (HAProxy: inter × fall).
	DrainNotice time.Duration
	// HTTP bounds what a client can make the server hold (see
	// httpserver.Options). Its WriteTimeout, which cuts an answer that is
	// not written in time, defaults here to 10 minutes: a tool behind the
	// gateway may work that long before it answers.
	//
	// Connections are bounded in all (MaxConns, default 1,024) and per
	// caller (MaxConnsPerAddr, default half of MaxConns): the remote
	// address's share, or once a request on the connection was
	// authenticated, its token's. When [Options].Auth is set,
	// EvictUnauthenticated is turned on: a connection on which no request
	// was authenticated gives up its place to a new one when the gateway
	// is full, so clients without a token hold only places no client
	// with one needs. Auth middleware other than [BearerTokens] reports
	// the requests it lets through with [httpserver.Authenticated].
	HTTP httpserver.Options
}

// Serve serves the gateway on ln until ctx is done, then stops in order:
// /readyz answers 503 at once, it serves on for opts.DrainNotice, then it
// stops accepting connections, lets the requests in flight finish
// (for opts.Drain at most), ends every session and stream, and stops
// every server, waiting for their processes to exit. It returns nil after
// such a stop, or the error that ended serving.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.Drain <= 0 {
		o.Drain = 10 * time.Second
	}
	if o.HTTP.WriteTimeout == 0 {
		o.HTTP.WriteTimeout = 10 * time.Minute
	}
	if g.opts.Auth != nil {
		o.HTTP.EvictUnauthenticated = true
	}
	srv := httpserver.New(g, &o.HTTP)
	ln = httpserver.NewListener(ln, &o.HTTP)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		g.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	g.noticeDrain(o.DrainNotice)
	g.log.Info("gateway: stopping", "drain", o.Drain, "in_flight", g.inflight.Load())
	// Shutdown closes the listener at once, then waits for connections to
	// go idle, which streams never do: it ends once Close below has ended
	// them.
	shut := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(context.Background(), o.Drain+10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(sctx)
	}()
	deadline := time.Now().Add(o.Drain)
	for g.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := g.inflight.Load(); n > 0 {
		g.log.Warn("gateway: requests still in flight after the drain", "in_flight", n)
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cerr := g.Close(cctx)
	if err := <-shut; err != nil {
		srv.Close()
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return cerr
}

// counting is the gateway's outermost middleware: it counts the requests
// in flight, for the drain.
func counting(n *atomic.Int64) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodSubscriptionsListen {
				return next(ctx, req) // a stream, which Close ends
			}
			n.Add(1)
			defer n.Add(-1)
			return next(ctx, req)
		}
	}
}
