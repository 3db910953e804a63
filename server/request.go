package server

import (
	"context"
	"log/slog"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Request is one client request as a handler sees it: who sent it, in
// which protocol era, and the ways back to the client (progress, log
// messages, and questions to the client's user, model or roots).
type Request struct {
	// ID and Method are the JSON-RPC request's.
	ID     jsonrpc.ID
	Method string
	// ProtocolVersion is the revision the request is served under: the
	// session's for a legacy request, the request's own for a stateless one.
	ProtocolVersion string
	// ClientInfo and ClientCapabilities come from the session (legacy) or
	// from the request's _meta (stateless).
	ClientInfo         protocol.Implementation
	ClientCapabilities protocol.ClientCapabilities
	// Session is the legacy session the request belongs to; nil for a
	// stateless request.
	Session *Session
	// RawMeta is the request's params._meta object, or nil.
	RawMeta jsontext.Value
	// URIVars holds the values of the template variables when a resource
	// template serves a resources/read.
	URIVars map[string]string

	server        *Server
	oc            originCtx // the handler's context (Context), and the HTTP request's (origin): see Header
	peer          serverapi.Peer
	msg           *jsonrpc.Message // as decoded: Meta has what was picked out of params
	progressToken jsontext.Value
	logLevel      protocol.LoggingLevel
	stateless     bool

	mu           sync.Mutex
	lastProgress float64
	mrtr         *mrtr
	mrtrState    *mrtr          // what mrtr points to once started: allocated with a stateless request
	toolCall     callToolParams // a tools/call's params, once decoded (callParams)

	toolCallDecoded bool
	toolCallErr     error

	// task is the task the request runs as, once it is one;
	// pendingTask and taskStarted the one an AddTaskTool handler may
	// start.
	task        *taskRun
	pendingTask *taskRun
	taskStarted chan struct{}

	ir intercept.Request // the request as receiving middleware sees it (intercepted)
}

// Stateless reports whether the request uses a stateless revision
// (2026-07-28 or later).
func (r *Request) Stateless() bool { return r.stateless }

// Header returns the header of the HTTP request that carried the message
// (an http.Header, whose keys are in canonical form: convert it with
// http.Header(req.Header()) to use Get), in both eras: the POST of a
// stateless request, or the POST of a legacy session's Streamable HTTP or
// HTTP+SSE message. It is nil for messages that came on a stream (stdio,
// in-memory). The server package does not link net/http.
//
// The calling identity reaches handlers the way net/http's middleware
// passes it on: an HTTP middleware in front of the transport's handler
// validates the caller (a bearer token, say) and puts what it learnt in
// the request's context with context.WithValue; the handler (and
// receiving middleware, [Options.Receiving]) finds it with ctx.Value, in both eras. In the stateless
// era the handler's context descends from the POST's; in a legacy
// session, whose requests run on the session's context, ferry adds the
// POST's values to it, behind the session's own (over HTTP+SSE, those of
// the GET that opened the session), and not the POST's cancellation ("the
// disconnection SHOULD NOT be interpreted as the client cancelling its
// request"). The header is there for what only it carries; a middleware
// that consumed a credential may delete it first.
func (r *Request) Header() map[string][]string {
	ctx := r.context()
	if ctx == nil {
		return nil
	}
	h, _ := serverapi.HeaderOf(ctx)
	return h
}

// RemoteAddr is the network address of the client that sent the HTTP
// request the message came in (an http.Request's RemoteAddr), "" for
// messages that came on a stream (stdio, in-memory). With
// intercept.ClientKey it names the client for bounds its clients share.
func (r *Request) RemoteAddr() string {
	ctx := r.context()
	if ctx == nil {
		return ""
	}
	return serverapi.RemoteAddrOf(ctx)
}

// context is the context r's handler runs with (withOrigin), nil before
// it is made.
func (r *Request) context() context.Context {
	if r.oc.origin == nil {
		return r.oc.Context
	}
	return &r.oc
}

// Server returns the server handling the request.
func (r *Request) Server() *Server { return r.server }

// Meta decodes the request's _meta.
func (r *Request) Meta() protocol.Meta {
	if len(r.RawMeta) == 0 {
		return nil
	}
	var m protocol.Meta
	json.Unmarshal(r.RawMeta, &m)
	return m
}

// Progress reports progress to the client when it asked for it (the
// request carried a progressToken); otherwise it does nothing. Progress
// must increase; a value that does not is dropped, as the specification
// requires ("The progress value MUST increase with each notification").
// total is omitted when zero.
func (r *Request) Progress(ctx context.Context, progress, total float64, message string) error {
	if len(r.progressToken) == 0 {
		return nil
	}
	r.mu.Lock()
	if progress <= r.lastProgress && r.lastProgress != 0 {
		r.mu.Unlock()
		return nil
	}
	r.lastProgress = progress
	r.mu.Unlock()
	return r.peer.Notify(ctx, protocol.NotificationProgress, &protocol.ProgressParams{
		ProgressToken: r.progressToken, Progress: progress, Total: total, Message: message,
	})
}

// logEnabled reports whether a log message at level goes to the client.
// Stateless requests log only when they asked ("servers MUST NOT emit
// notifications/message for requests that did not include this field");
// legacy sessions log at every level until logging/setLevel says otherwise.
func (r *Request) logEnabled(level protocol.LoggingLevel) bool {
	min := r.logLevel
	if r.Session != nil {
		min = r.Session.LogLevel()
	}
	if min == "" {
		return !r.stateless
	}
	return level.Rank() >= min.Rank()
}

// Log sends a notifications/message to the client about this request,
// if the client's log level lets it through.
func (r *Request) Log(ctx context.Context, level protocol.LoggingLevel, logger string, data any) error {
	if !r.logEnabled(level) {
		return nil
	}
	return r.peer.Notify(ctx, protocol.NotificationMessage, &protocol.LoggingMessageParams{Level: level, Logger: logger, Data: data})
}

// ClientLog returns a [slog.Logger] whose records are sent to the client as
// notifications/message about this request.
func (r *Request) ClientLog() *slog.Logger {
	return slog.New(&logHandler{send: func(ctx context.Context, level protocol.LoggingLevel, logger string, data any) {
		r.Log(ctx, level, logger, data)
	}, enabled: r.logEnabled, logger: r.server.impl.Name})
}

// CloseStream ends the HTTP response stream of a legacy Streamable HTTP
// request while the request goes on: the client reconnects with
// Last-Event-ID and gets the rest, response included (SSE polling, SEP-1699:
// "the server MAY close the connection ... at any time in order to avoid
// holding a long-lived connection"). It reports whether the transport
// could; other transports cannot.
func (r *Request) CloseStream() bool {
	p, ok := r.peer.(*connPeer)
	if !ok {
		return false
	}
	sc, ok := jsonrpc.As[jsonrpc.RequestStreamCloser](p.Stream())
	return ok && sc.CloseRequestStream(r.ID)
}

// Elicit asks the client's user for input: a form (Mode "form" or empty,
// with a RequestedSchema) or a visit to a URL (Mode "url").
//
// Over a legacy session this sends elicitation/create and waits for the
// answer. For a stateless request the first call ends the handler with an
// input_required result (Elicit returns [ErrInputRequired], which the
// handler should return) and the handler runs again when the client
// retries with the answer: code before Elicit runs again (see [Once] for
// what must run only once). The server sends the question whatever the
// handler returns after it, and logs a warning when that is not
// ErrInputRequired.
//
// The errors are those of [Request.AskAll], the same in both eras.
func (r *Request) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	var res protocol.ElicitResult
	if err := r.ask(ctx, "elicit", protocol.MethodElicit, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func (r *Request) legacyElicitParams(p *protocol.ElicitParams) *protocol.ElicitParams {
	if r.stateless || protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) || p.Mode == "" {
		return p
	}
	q := *p // 2025-06-18 has no mode member
	q.Mode = ""
	return &q
}

// CreateMessage asks the client's model for a message (sampling). It
// works like [Request.Elicit] in both eras.
func (r *Request) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	var res protocol.CreateMessageResult
	if err := r.ask(ctx, "sample", protocol.MethodCreateMessage, p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListRoots asks the client for its roots. It works like
// [Request.Elicit] in both eras.
func (r *Request) ListRoots(ctx context.Context) (*protocol.ListRootsResult, error) {
	var res protocol.ListRootsResult
	if err := r.ask(ctx, "roots", protocol.MethodListRoots, &protocol.RequestParams{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
