package websocket

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ferrymcp/ferry/internal/httpsec"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a [Handler]. The zero value is usable.
type Options struct {
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// MaxMessageBytes bounds one incoming message (default 16 MiB, as
	// the other transports). A larger message is answered with an error
	// and dropped; one many times larger ends the connection.
	MaxMessageBytes int
	// MaxConnections bounds the connections open at once (default
	// 10,000), exactly, however many upgrades run at once; an upgrade
	// beyond it gets 503.
	MaxConnections int
	// MaxConnectionsPerCaller bounds the connections of one caller (see
	// Caller), so that one client cannot take every place (default half
	// of MaxConnections); an upgrade beyond it gets 503. Many clients
	// behind one address (a proxy, or tests on loopback) share it: raise
	// it up to MaxConnections (no share), or name callers otherwise.
	MaxConnectionsPerCaller int
	// Caller names the caller of an upgrade request, for the shares of
	// MaxConnectionsPerCaller and MaxReadMemory: the identity that
	// authentication middleware in front of the handler put in the
	// request's context, for instance. Default: the remote address's IP
	// (an IPv6 address's /64 network).
	Caller func(*http.Request) string
	// MaxReadMemory bounds the memory of the messages being read at once,
	// across connections (default 16 times MaxMessageBytes, 256 MiB), of
	// which one caller holds at most half. A message that does not fit is
	// read to its end and dropped: a request gets an error answer, and
	// the connection goes on.
	MaxReadMemory int64
	// MessageTimeout bounds the reading of a message once its first frame
	// came (default 60 seconds; negative: no bound): a message not
	// finished in time ends the connection, and its memory is released.
	MessageTimeout time.Duration
	// IdleTimeout closes a connection on which no message came or went
	// for this long while no request of the client waits for its answer
	// (default 30 minutes, as a Streamable HTTP session's; negative:
	// never). Keep-alive pings do not count.
	IdleTimeout time.Duration
	// AllowedOrigins are Origin values accepted in addition to the
	// default policy (same host, or a loopback origin when the server
	// listens on loopback), e.g. "https://app.example.com".
	AllowedOrigins []string
	// AllowedHosts are Host values accepted in addition to the default
	// policy, for servers behind a reverse proxy that keeps the public
	// host name. When the server listens on a loopback address, only
	// loopback host names and these are accepted: the protection against
	// DNS rebinding, which matters as much here as over HTTP (browsers
	// let any page open a WebSocket).
	AllowedHosts []string
	// DisableHostCheck turns off the Origin and Host checks (for servers
	// that do their own).
	DisableHostCheck bool
	// KeepAlive is the interval of pings on each connection; a pong
	// that does not come back within another interval ends the
	// connection (default 30 seconds; negative: no pings).
	KeepAlive time.Duration
}

// Handler serves an MCP [server.Server] over WebSocket: an [http.Handler]
// that upgrades each request (subprotocol "mcp") and serves the
// connection as it would a stdio pipe: a legacy session for a client that
// initializes, and any number of stateless (2026-07-28) requests.
type Handler struct {
	server *server.Server
	opts   Options
	log    *slog.Logger

	places *shares // connections, counted before their upgrade
	memory *shares // bytes of the messages being read

	mu     sync.Mutex
	conns  map[*server.Session]*stream
	closed bool
	wg     sync.WaitGroup // ServeHTTP calls that upgraded
}

// Defaults of [Options].
const (
	DefaultMaxConnections = 10000
	DefaultMessageTimeout = 60 * time.Second
	DefaultIdleTimeout    = 30 * time.Minute
	DefaultKeepAlive      = 30 * time.Second
)

// NewHandler returns a handler serving s.
func NewHandler(s *server.Server, opts *Options) *Handler {
	h := &Handler{server: s, conns: map[*server.Session]*stream{}}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxMessageBytes <= 0 {
		h.opts.MaxMessageBytes = jsonrpc.DefaultMaxSize
	}
	o := &h.opts
	if o.MaxConnections <= 0 {
		o.MaxConnections = DefaultMaxConnections
	}
	if o.MaxConnectionsPerCaller <= 0 {
		o.MaxConnectionsPerCaller = max(o.MaxConnections/2, 1)
	}
	if o.MaxReadMemory <= 0 {
		o.MaxReadMemory = 16 * int64(jsonrpc2.MaxSize(o.MaxMessageBytes))
	}
	if o.Caller == nil {
		o.Caller = remoteAddr
	}
	zeroIs(&o.KeepAlive, DefaultKeepAlive)
	zeroIs(&o.MessageTimeout, DefaultMessageTimeout)
	zeroIs(&o.IdleTimeout, DefaultIdleTimeout)
	h.places = newShares(int64(o.MaxConnections), int64(o.MaxConnectionsPerCaller))
	h.memory = newShares(o.MaxReadMemory, o.MaxReadMemory/2)
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// ServeHTTP upgrades the request and serves the connection until either
// side closes it or the handler is closed.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.opts.DisableHostCheck && !httpsec.Check(w, r, &httpsec.Options{AllowedOrigins: h.opts.AllowedOrigins, AllowedHosts: h.opts.AllowedHosts}) {
		return
	}
	caller := h.opts.Caller(r)
	if !h.admit(caller) {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	defer h.wg.Done()
	defer h.places.release(caller, 1)
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// The Origin was checked above, by the policy every ferry HTTP
		// transport applies; the library's own check would refuse any
		// cross-origin page, including allowed ones.
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		h.log.Debug("websocket: upgrade failed", "remote", r.RemoteAddr, "error", err)
		return // Accept wrote the error response
	}
	if c.Subprotocol() != Subprotocol {
		c.Close(websocket.StatusPolicyViolation, `the "mcp" subprotocol is required`)
		return
	}
	st := newStream(c, jsonrpc.Limits{MaxSize: h.opts.MaxMessageBytes}, h.opts.KeepAlive, readBounds{
		messageTimeout: h.opts.MessageTimeout,
		idle:           h.opts.IdleTimeout,
		memory:         h.memory,
		caller:         caller,
	})
	conn := h.server.Connect(context.WithoutCancel(r.Context()), st)
	if !h.track(conn, st) {
		conn.Close()
	}
	conn.Wait()
	h.untrack(conn)
	st.Close()
}

// admit takes a place for a connection of caller, unless the handler is
// closed, full, or caller holds its share. The place is taken before the
// upgrade, so that concurrent upgrades cannot overshoot MaxConnections.
func (h *Handler) admit(caller string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || !h.places.reserve(caller, 1) {
		return false
	}
	h.wg.Add(1)
	return true
}

// zeroIs sets a zero duration to def; a negative one means no bound and
// is kept.
func zeroIs(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

func (h *Handler) track(conn *server.Session, st *stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conns[conn] = st
	return true
}

func (h *Handler) untrack(conn *server.Session) {
	h.mu.Lock()
	delete(h.conns, conn)
	h.mu.Unlock()
}

// Close refuses new connections, closes every open one (status 1001,
// "going away", after the answers being computed were sent or cancelled)
// and waits for their handlers to return. An http.Server's Shutdown does
// not do this: upgraded connections are no longer its own.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	conns := make(map[*server.Session]*stream, len(h.conns))
	for c, st := range h.conns {
		conns[c] = st
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for c, st := range conns {
		wg.Go(func() {
			st.closeWith(websocket.StatusGoingAway, "server shutting down")
			c.Close()
		})
	}
	wg.Wait()
	h.wg.Wait()
	return nil
}
