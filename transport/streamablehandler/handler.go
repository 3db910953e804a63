// Package streamablehandler serves MCP servers over Streamable HTTP, in
// both protocol eras on one endpoint:
//
//   - legacy (2025-03-26 to 2025-11-25): sessions opened by initialize and
//     named by a random Mcp-Session-Id, server-to-client messages on the
//     POST's SSE stream or a GET stream, resumable streams (event ids and
//     Last-Event-ID) from a bounded event store, DELETE to end a session;
//     the Mcp-Method, Mcp-Name and Mcp-Param-* headers such a request
//     carries (it need not) are checked against its body too;
//   - stateless (2026-07-28): self-contained requests whose Mcp-Method, Mcp-Name
//     and Mcp-Param-* headers are checked against the body, one response
//     stream per request, subscriptions/listen streams.
//
// [Handler] is an [http.Handler]. The client side is package
// transport/streamable, apart so that a client links no server.
package streamablehandler

import (
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/httpdeadline"
	"github.com/ferrymcp/ferry/internal/httpsec"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Options configure a [Handler]. The zero value is usable.
type Options struct {
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// SessionIdleTimeout ends a legacy session after this long without a
	// request or an open stream (default 30 minutes; negative: never).
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the legacy sessions open at once (default
	// 10,000). A full table makes room by ending idle sessions of the
	// client with the most sessions (the authenticated caller, else the
	// client's address, IPv6 by its /64), leaving an authenticated caller
	// 8 of its sessions; initialize gets 503 when none can go.
	MaxSessions int
	// MaxBodyBytes bounds a request body (default 16 MiB); a larger body
	// gets 413.
	MaxBodyBytes int64
	// ReadTimeout bounds the reading of a request's body (default 30
	// seconds; negative: none): a body that has not arrived in time gets
	// 408 and the connection closes. Together with WriteTimeout it keeps a
	// slow or stalled client from holding a connection and a goroutine,
	// whatever http.Server the handler runs under (see
	// [github.com/ferrymcp/ferry/transport/httpserver] for the server's own
	// bounds).
	ReadTimeout time.Duration
	// WriteTimeout bounds each write of an answer or of an event to a
	// stream (default 30 seconds; negative: none): a client that does not
	// read for that long is disconnected. It counts from each write, not
	// from the start of the request, so that event streams can last for
	// hours.
	WriteTimeout time.Duration
	// AllowedOrigins are Origin values accepted in addition to the
	// default policy (same host, or a loopback origin when the server
	// listens on loopback), e.g. "https://app.example.com".
	AllowedOrigins []string
	// AllowedHosts are Host values accepted in addition to the default
	// policy, for servers behind a reverse proxy that keeps the public
	// host name. When the server listens on a loopback address, only
	// loopback host names and these are accepted: the protection against
	// DNS rebinding.
	AllowedHosts []string
	// DisableHostCheck turns off the Origin and Host checks (for servers
	// that do their own).
	DisableHostCheck bool
	// KeepAlive is the interval of SSE comments on quiet streams (default
	// 15 seconds; negative: none).
	KeepAlive time.Duration
	// EventStoreBytes bounds the memory of the events kept per legacy
	// session for Last-Event-ID resumption (default 1 MiB): each event
	// counts its encoded size and a few dozen bytes of bookkeeping.
	EventStoreBytes int
	// Events, when set, keeps the events of streams beyond this handler,
	// for a client to resume them on another (see [EventLog]).
	Events EventLog
	// Retry is the reconnection delay announced on resumable streams
	// (default 1 second).
	Retry time.Duration
	// AlwaysSSE answers every request with an event stream. By default a
	// request that sends nothing before its response is answered with
	// plain JSON, and one that does (progress, log messages, questions to
	// the client) switches to SSE at its first such message.
	AlwaysSSE bool
	// DisableSessions refuses initialize and sessions: the endpoint then
	// speaks only the stateless revisions.
	DisableSessions bool
}

// Handler serves an MCP [server.Server] over Streamable HTTP, both eras on
// one endpoint. Mount it at the MCP endpoint path (e.g. "/mcp").
type Handler struct {
	server serverapi.Ops[*server.Session]
	opts   Options
	log    *slog.Logger

	bodies streamwire.BodyPool

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
	if o.SessionIdleTimeout == 0 {
		o.SessionIdleTimeout = 30 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = jsonrpc.DefaultMaxSize
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = 15 * time.Second
	}
	if o.EventStoreBytes <= 0 {
		o.EventStoreBytes = 1 << 20
	}
	if o.Retry <= 0 {
		o.Retry = time.Second
	}
	h.log = o.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// Close ends every legacy session. In-flight HTTP requests of those
// sessions return.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	sessions := make([]*session, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.close()
	}
	return nil
}

// Sessions returns the number of open legacy sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// "Servers MUST validate the Origin header on all incoming
	// connections to prevent DNS rebinding attacks."
	if !h.opts.DisableHostCheck && !httpsec.Check(w, r, &httpsec.Options{AllowedOrigins: h.opts.AllowedOrigins, AllowedHosts: h.opts.AllowedHosts}) {
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "method not allowed"})
	}
}

// readMessage reads and decodes a POST body, answering the errors itself.
// It returns the body too, and the pool's handle of it, for
// [Handler.post] to recycle.
func (h *Handler) readMessage(w http.ResponseWriter, r *http.Request) (*jsonrpc.Message, []byte, *[]byte, bool) {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Content-Type must be application/json"})
			return nil, nil, nil, false
		}
	}
	if !accepts(r, "application/json") || !accepts(r, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "the Accept header must list both application/json and text/event-stream"})
		return nil, nil, nil, false
	}
	if r.ContentLength > h.opts.MaxBodyBytes {
		writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, tooLarge(r.ContentLength, h.opts.MaxBodyBytes))
		return nil, nil, nil, false
	}
	httpdeadline.Read(w, h.opts.ReadTimeout)
	body, handle, err := h.bodies.Read(http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes), r.ContentLength, int(h.opts.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, tooLarge(-1, h.opts.MaxBodyBytes))
		case httpdeadline.Expired(err):
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestTimeout, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
				"the request body did not arrive within %v", h.opts.ReadTimeout))
		default:
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "reading the body: " + err.Error()})
		}
		return nil, nil, nil, false
	}
	m, err := jsonrpc.Decode(body, jsonrpc.Limits{MaxSize: int(h.opts.MaxBodyBytes)})
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) {
			writeError(w, http.StatusBadRequest, de.ID, de.Err)
		} else {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.AsError(err))
		}
		return nil, nil, nil, false
	}
	return m, body, handle, true
}

func tooLarge(n, limit int64) *jsonrpc.Error {
	if n < 0 {
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body exceeds the limit of %d bytes", limit)
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request body of %d bytes exceeds the limit of %d bytes", n, limit)
}

// accepts reports whether the request's Accept header admits media type
// mt. No Accept header admits everything.
func accepts(r *http.Request, mt string) bool {
	values := r.Header.Values("Accept")
	if len(values) == 0 {
		return true
	}
	if len(values) == 1 && (values[0] == "application/json, text/event-stream" || values[0] == "text/event-stream, application/json") {
		return true // what clients send, spelled the usual way
	}
	major, _, _ := strings.Cut(mt, "/")
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			t, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			t = strings.TrimSpace(t)
			if t == mt || t == "*/*" || t == major+"/*" {
				return true
			}
		}
	}
	return false
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	m, body, handle, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	// Only a request's handler lends its message, so the body is given
	// back after it: here for a stateless request, served on this
	// goroutine; by a legacy request's own goroutine, which may outlive
	// this one (see session.handle).
	lent := lentBody{m: m, body: body, handle: handle}
	if isStateless(r, m) {
		defer h.release(lent)
		h.serveStateless(w, r, m)
		return
	}
	if h.opts.DisableSessions {
		writeError(w, http.StatusBadRequest, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"this endpoint serves only the stateless protocol versions %s; send %s in _meta and the MCP-Protocol-Version header",
			strings.Join(slices.DeleteFunc(protocol.SupportedVersions(), protocol.IsLegacy), ", "), protocol.MetaProtocolVersion))
		return
	}
	if e := h.checkHeaders(r, m, false); e != nil {
		writeError(w, http.StatusBadRequest, m.ID, e)
		return
	}
	if sid := r.Header.Get(streamwire.HeaderSessionID); sid != "" {
		s := h.session(sid)
		if s == nil {
			// "The server ... MUST respond to requests containing that
			// session ID with HTTP 404 Not Found."
			writeError(w, http.StatusNotFound, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found (it may have expired): send initialize again"})
			return
		}
		s.servePost(w, r, m, lent)
		return
	}
	if m.Method == protocol.MethodInitialize {
		h.initialize(w, r, m, lent)
		return
	}
	writeError(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "missing Mcp-Session-Id: legacy clients must send initialize first; stateless clients must send the MCP-Protocol-Version header and _meta"})
}

// lentBody is a request's body, from the pool: a handler that took its
// message's arguments as lent (jsonrpc.Message.Lent) leaves it to be
// reused once the answer is encoded.
type lentBody struct {
	m      *jsonrpc.Message
	body   []byte
	handle *[]byte
}

// release gives a body back to the pool if the handler lent the message
// that refers to it. Call it once nothing reads the message any more.
func (h *Handler) release(l lentBody) {
	if l.m.IsRequest() && l.m.Lent {
		h.bodies.Put(l.body, l.handle)
	}
}

// isStateless reports whether a POST belongs to the stateless era. A session
// id or a legacy MCP-Protocol-Version header means legacy; any other
// version header means stateless (an unknown one gets
// UnsupportedProtocolVersionError); without a header, _meta decides, and
// initialize is legacy.
func isStateless(r *http.Request, m *jsonrpc.Message) bool {
	if r.Header.Get(streamwire.HeaderSessionID) != "" && jsonrpc2.Meta(m).ProtocolVersion == "" {
		return false
	}
	if v := r.Header.Get(streamwire.HeaderProtocolVersion); v != "" {
		return !protocol.IsLegacy(v)
	}
	if v := jsonrpc2.Meta(m).ProtocolVersion; v != "" {
		return !protocol.IsLegacy(v)
	}
	return false
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(streamwire.HeaderSessionID)
	if sid == "" || h.opts.DisableSessions {
		// 2026-07-28: "HTTP GET or DELETE to the MCP endpoint: respond
		// with 405 Method Not Allowed."
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "GET needs a legacy session (Mcp-Session-Id)"})
		return
	}
	s := h.session(sid)
	if s == nil {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return
	}
	if !accepts(r, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the Accept header must list text/event-stream"})
		return
	}
	s.serveGet(w, r)
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(streamwire.HeaderSessionID)
	if sid == "" || h.opts.DisableSessions {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "DELETE needs a legacy session (Mcp-Session-Id)"})
		return
	}
	s := h.session(sid)
	if s == nil {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return
	}
	s.close()
	w.WriteHeader(http.StatusNoContent)
}

func (h *Handler) session(id string) *session {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// writeError answers with a JSON-RPC error object.
func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	b, _ := jsonrpc.AppendMessage(nil, &jsonrpc.Message{ID: id, Error: e})
	w.Header()["Content-Type"] = valueJSON
	w.WriteHeader(status)
	w.Write(b)
}

// writeJSON answers with one message, within timeout.
func writeJSON(w http.ResponseWriter, status int, body []byte, timeout time.Duration) {
	httpdeadline.Write(w, timeout)
	setJSONHeaders(w.Header(), len(body))
	w.WriteHeader(status)
	w.Write(body)
}

// flush sends what was written so far.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// flushed sends what was written so far, and tells whether that failed
// (the client went away, or did not read within the write deadline).
func flushed(w http.ResponseWriter) error {
	if err := http.NewResponseController(w).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return nil
}

// errClosed is the error of a message to a stateless request's client
// once its response is complete: the one error of a closed connection,
// as a legacy session's would be.
var errClosed = fmt.Errorf("streamable: the request's response is complete: %w", jsonrpc.ErrClosed)
