package websocket

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ferrymcp/ferry/internal/httpsec"
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
	// 10,000); an upgrade beyond it gets 503.
	MaxConnections int
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

	mu     sync.Mutex
	conns  map[*jsonrpc.Conn]*stream
	closed bool
	wg     sync.WaitGroup // ServeHTTP calls that upgraded
}

// NewHandler returns a handler serving s.
func NewHandler(s *server.Server, opts *Options) *Handler {
	h := &Handler{server: s, conns: map[*jsonrpc.Conn]*stream{}}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MaxMessageBytes <= 0 {
		h.opts.MaxMessageBytes = jsonrpc.DefaultMaxSize
	}
	if h.opts.MaxConnections <= 0 {
		h.opts.MaxConnections = 10000
	}
	if h.opts.KeepAlive == 0 {
		h.opts.KeepAlive = 30 * time.Second
	}
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
	if !h.admit() {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
		return
	}
	defer h.wg.Done()
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
	st := newStream(c, jsonrpc.Limits{MaxSize: h.opts.MaxMessageBytes}, h.opts.KeepAlive)
	conn := h.server.Connect(context.WithoutCancel(r.Context()), st)
	if !h.track(conn, st) {
		conn.Close()
	}
	conn.Wait()
	h.untrack(conn)
	st.Close()
}

// admit counts a connection in, unless the handler is closed or full.
func (h *Handler) admit() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.conns) >= h.opts.MaxConnections {
		return false
	}
	h.wg.Add(1)
	return true
}

func (h *Handler) track(conn *jsonrpc.Conn, st *stream) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conns[conn] = st
	return true
}

func (h *Handler) untrack(conn *jsonrpc.Conn) {
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
	conns := make(map[*jsonrpc.Conn]*stream, len(h.conns))
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
