// Package ssehandler serves MCP servers over the HTTP with SSE transport
// of revision 2024-11-05 (see package transport/sse, its client side and
// wire format, apart so that a client links no server).
package ssehandler

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/httpdeadline"
	"github.com/ferrymcp/ferry/internal/httpsec"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a [Handler]. The zero value is usable.
type Options struct {
	// SSEPath is the path of the SSE endpoint, which clients GET (default
	// "/sse"). Paths are those the handler sees: when it is mounted
	// under a prefix with [http.StripPrefix], the endpoint event still
	// names the full path the client used.
	SSEPath string
	// MessagePath is the path of the message endpoint, which clients
	// POST to (default: "message" beside SSEPath, i.e. "/message"). It
	// may equal SSEPath: GET and POST are then told apart by method.
	MessagePath string
	// KeepAlive is the interval of SSE comments on a quiet stream
	// (default 15 seconds; negative: none), which keep proxies from
	// closing it and find out clients that went away.
	KeepAlive time.Duration
	// MaxBodyBytes bounds a POST body (default 16 MiB); a larger body
	// gets 413.
	MaxBodyBytes int64
	// ReadTimeout bounds the reading of a POST's body (default 30
	// seconds; negative: none): a body that has not arrived in time gets
	// 408 and the connection closes.
	ReadTimeout time.Duration
	// MaxSessions bounds the sessions open at once (default 10,000); a
	// GET beyond it gets 503.
	MaxSessions int
	// MaxQueued bounds the messages waiting to be written to a session's
	// event stream (default 64); a sender waits while it is full.
	MaxQueued int
	// SendTimeout is how long a message may wait for a client that does
	// not read its event stream (the queue staying full, or a write
	// blocking) before that client is disconnected, ending its session
	// (default 30 seconds).
	SendTimeout time.Duration
	// SessionIdleTimeout, when positive, ends a session after this long
	// without a POST. By default a session lasts as long as its event
	// stream: a client may legitimately listen for notifications for
	// hours.
	SessionIdleTimeout time.Duration
	// AllowedOrigins and AllowedHosts extend the protections against DNS
	// rebinding, which answer 403 Forbidden: by default a server listening
	// on loopback accepts only loopback Host names, and an Origin header
	// must name a loopback origin (server on loopback) or the request's
	// own host. AllowedOrigins are Origin values accepted besides (e.g.
	// "https://app.example.com"); AllowedHosts are Host values accepted
	// besides, for servers behind a reverse proxy that keeps the public
	// host name. DisableHostCheck turns the checks off, for servers that
	// do their own.
	AllowedOrigins   []string
	AllowedHosts     []string
	DisableHostCheck bool
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Handler serves an MCP [server.Server] over the HTTP with SSE transport
// of revision 2024-11-05: GET on [Options.SSEPath] opens a session and
// its event stream, POST on [Options.MessagePath]?sessionId=… delivers a
// client message to it. Each event stream is one session, served by
// serverapi.Server.ConnectSession; it ends when the stream does.
//
// The handler serves the two paths and answers 404 for any other, so it
// can be given to [http.ListenAndServe] as is, or mounted next to a
// Streamable HTTP endpoint (mux.Handle("/sse", h); mux.Handle("/message",
// h)).
type Handler struct {
	server   serverapi.Ops[*server.Session]
	opts     Options
	sec      httpsec.Options
	log      *slog.Logger
	sse, msg string // cleaned paths

	mu       sync.Mutex
	sessions map[string]*session
	closed   bool
}

// New returns a handler serving s.
func New(s *server.Server, opts *Options) *Handler {
	h := &Handler{server: serverapi.OpsOf[*server.Session](s), sessions: map[string]*session{}}
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	if o.SSEPath == "" {
		o.SSEPath = "/sse"
	}
	h.sse = path.Clean("/" + o.SSEPath)
	if o.MessagePath == "" {
		h.msg = path.Join(path.Dir(h.sse), "message")
	} else {
		h.msg = path.Clean("/" + o.MessagePath)
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = jsonrpc.DefaultMaxSize
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = 64
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 30 * time.Second
	}
	h.sec = httpsec.Options{AllowedOrigins: o.AllowedOrigins, AllowedHosts: o.AllowedHosts}
	h.log = o.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// Close ends every session and refuses new ones. The event streams
// return; the server's handlers of those sessions are cancelled.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.conn.Close()
	}
	return nil
}

// Sessions returns the number of open sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// ServeHTTP checks the request against the DNS rebinding protections,
// then serves GET on the SSE path and POST on the message path.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// "Servers MUST validate the Origin header on all incoming
	// connections to prevent DNS rebinding attacks."
	if !h.opts.DisableHostCheck && !httpsec.Check(w, r, &h.sec) {
		return
	}
	p := r.URL.Path
	switch {
	case p == h.sse && r.Method == http.MethodGet:
		h.serveEvents(w, r)
	case p == h.msg && r.Method == http.MethodPost:
		h.servePost(w, r)
	case p == h.sse || p == h.msg:
		allow := http.MethodGet
		if p == h.msg {
			allow = http.MethodPost
			if h.msg == h.sse {
				allow = "GET, POST"
			}
		}
		w.Header().Set("Allow", allow)
		// Plain text, not a JSON-RPC error: a client probing for
		// Streamable HTTP takes a 405 whose body "is not a recognized
		// modern JSON-RPC error" as the sign to fall back to this
		// transport.
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// endpointURI returns the URI of the endpoint event: MessagePath under
// the prefix the handler is mounted at (what [http.StripPrefix] removed
// from the path), with the session id.
func (h *Handler) endpointURI(r *http.Request, id string) string {
	prefix := ""
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		if full, seen := u.EscapedPath(), r.URL.EscapedPath(); strings.HasSuffix(full, seen) {
			prefix = strings.TrimSuffix(full[:len(full)-len(seen)], "/")
		}
	}
	return prefix + (&url.URL{Path: h.msg}).EscapedPath() + "?sessionId=" + url.QueryEscape(id)
}

func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"missing sessionId: GET %s first and POST to the URI of its endpoint event", h.sse))
		return
	}
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s == nil {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"session not found: it ended with its event stream; GET %s to open a new one", h.sse))
		return
	}
	m, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	// The session's handlers run on its context: the POST's values (what
	// an HTTP middleware put there) and header go with the message.
	m.Context = &serverapi.Origin{Context: r.Context(), Header: r.Header, RemoteAddr: r.RemoteAddr}
	switch s.deliver(r.Context(), m) {
	case nil:
		w.WriteHeader(http.StatusAccepted)
	case errSessionClosed:
		writeError(w, http.StatusNotFound, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "session closed"))
	default:
		// The client went away before the message could be taken.
	}
}

// readMessage reads and decodes a POST body, answering errors itself.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) (*jsonrpc.Message, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Content-Type must be application/json"))
			return nil, false
		}
	}
	limit := h.opts.MaxBodyBytes
	if r.ContentLength > limit {
		writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"request body of %d bytes exceeds the limit of %d bytes", r.ContentLength, limit))
		return nil, false
	}
	httpdeadline.Read(w, h.opts.ReadTimeout)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"request body exceeds the limit of %d bytes", limit))
		case httpdeadline.Expired(err):
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"the request body did not arrive within %v", h.opts.ReadTimeout))
		default:
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeParseError, "reading the body: %v", err))
		}
		return nil, false
	}
	m, err := jsonrpc.Decode(body, jsonrpc.Limits{MaxSize: int(limit)})
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeError(w, http.StatusBadRequest, de.ID, de.Err)
		} else {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.AsError(err))
		}
		return nil, false
	}
	return m, true
}

// writeError answers with a JSON-RPC error object.
func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	b, _ := jsonrpc.AppendMessage(nil, &jsonrpc.Message{ID: id, Error: e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// register adds a session unless the handler is closed or full.
func (h *Handler) register(s *session) (status int, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return http.StatusServiceUnavailable, "the server is shutting down"
	case len(h.sessions) >= h.opts.MaxSessions:
		return http.StatusServiceUnavailable, "too many sessions"
	}
	h.sessions[s.id] = s
	return 0, ""
}

func (h *Handler) unregister(s *session) {
	h.mu.Lock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.mu.Unlock()
}

// errSessionClosed is the error of a session's stream once the session
// ended: the one error of a closed connection.
var errSessionClosed = fmt.Errorf("sse: session closed: %w", jsonrpc.ErrClosed)
