package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A MethodHandler serves one message of a client of a custom method
// ([Server.HandleMethod]): for a request, it returns the result to send
// back (any value that encodes to the result object, or raw JSON) or an
// error (a *[jsonrpc.Error] is sent as it is); for a notification
// (req.ID is not valid), what it returns is dropped.
type MethodHandler func(ctx context.Context, req *Request) (any, error)

// Params returns the request's params as they arrived (nil when absent).
// They share the message's memory, as [Request.RawMeta] does.
func (r *Request) Params() jsontext.Value { return r.msg.Params }

// Name is what the request names, decoded as the server decodes it to
// serve it: the tool of a tools/call, the prompt of a prompts/get, the
// resource's URI of a resources/read, subscribe or unsubscribe. It is ""
// for other methods, and for params that do not decode (the request then
// fails with invalid params). Middleware that allows or refuses by name
// decides on what would run, however the client spelled it (spaces,
// escapes): never search the raw params for a name.
func (r *Request) Name() string {
	params := r.msg.Params
	switch r.Method {
	case protocol.MethodToolsCall:
		p, err := r.callParams(params)
		if err != nil {
			return ""
		}
		return p.Name
	case protocol.MethodPromptsGet:
		var p protocol.GetPromptParams
		if decodeParams(params, &p) != nil {
			return ""
		}
		return p.Name
	case protocol.MethodResourcesRead:
		var p protocol.ReadResourceParams
		if decodeParams(params, &p) != nil {
			return ""
		}
		return p.URI
	case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		var p protocol.SubscribeParams
		if decodeParams(params, &p) != nil {
			return ""
		}
		return p.URI
	}
	return ""
}

// Lend is middleware's [Options.LendToolArguments] for one request it
// answers itself: its promise that, once the result it returns has been
// encoded, nothing it kept or started refers to the request's memory (the
// params, RawMeta, strings decoded from them). Transports that read each
// request into a buffer of their own (Streamable HTTP) then reuse that
// buffer for the next request. A gateway that forwards a tool call and
// has its answer makes the promise: the arguments it passed on were
// written upstream before the answer came.
func (r *Request) Lend() { r.msg.Lent = true }

// handle serves r through the receiving middleware.
func (s *Server) handle(ctx context.Context, r *Request) (any, error) {
	if s.receiving == nil {
		return s.method(ctx, r)
	}
	res, err := s.receiving(ctx, r.intercepted())
	if err != nil || res.Release == nil {
		return res.Value, err
	}
	return &lentResult{value: res.Value, release: res.Release}, nil
}

// method serves r without middleware.
func (s *Server) method(ctx context.Context, r *Request) (any, error) {
	switch {
	case !r.ID.IsValid():
		s.notification(ctx, r)
		return nil, nil
	case r.stateless:
		return s.statelessMethod(ctx, r)
	}
	return s.legacyMethod(ctx, r)
}

// serveIntercepted is the innermost handler of the receiving middleware:
// it serves the request the server made req for, as it arrived.
func (s *Server) serveIntercepted(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
	r := RequestOf(req)
	if r == nil {
		return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"server: middleware passed on a request (%s) the server did not receive", req.Method)
	}
	v, err := s.method(ctx, r)
	return resultOf(v), err
}

// resultOf is a handler's result as middleware sees it.
func resultOf(v any) intercept.Result {
	res := intercept.Result{Value: v}
	if t, ok := v.(*protocol.CallToolResult); ok {
		res.IsError = t.IsError
	}
	return res
}

// buildChains composes the middleware of the options around what they
// wrap; a chain without middleware stays nil, and costs nothing.
func (s *Server) buildChains() {
	if mw := s.opts.Receiving; len(mw) > 0 {
		s.receiving = intercept.Chain(s.serveIntercepted, mw...)
	}
	if mw := s.opts.Sending; len(mw) > 0 {
		s.sending = intercept.Chain(sendIntercepted, mw...)
	}
}

// intercepted returns r as middleware sees it, made in r's allocation.
func (r *Request) intercepted() *intercept.Request {
	ir := &r.ir
	*ir = intercept.Request{Method: r.Method, ID: r.ID, ProtocolVersion: r.ProtocolVersion,
		Stateless: r.stateless, Params: r.msg.Params}
	if r.msg.Params == nil {
		ir.Params = nil // no typed nil: "absent" reads as nil
	}
	ir.Source = (*served)(r)
	return ir
}

// RequestOf returns the request a server received that req stands for,
// to the server's receiving middleware: the way to what only the server
// knows (the client's session, capabilities and identity) and to what it
// may do (progress, log messages, questions to the client). It is nil
// for a request the server did not receive (one being sent, or made by
// middleware).
func RequestOf(req *intercept.Request) *Request {
	s, _ := req.Source.(*served)
	return (*Request)(s)
}

// served is a received request as the source of its intercept.Request.
type served Request

func (s *served) Name() string { return (*Request)(s).Name() }

func (s *served) Arguments() jsontext.Value {
	if s.Method != protocol.MethodToolsCall {
		return nil
	}
	p, err := (*Request)(s).callParams(s.msg.Params)
	if err != nil {
		return nil
	}
	return p.Arguments
}

func (s *served) ProgressToken() jsontext.Value { return s.progressToken }

func (s *served) Caller() *intercept.Caller {
	c, _ := intercept.CallerFrom((*Request)(s).context())
	return c
}

// lentResult is a result in memory that receiving middleware lent (its
// Result.Release): written to the client, it gives that memory back. A
// result never written (its request cancelled) leaves its memory to the
// collector.
type lentResult struct {
	value   any
	release func()
}

// errEncodedTwice would report a lent result encoded a second time, when
// its memory may already hold another message.
var errEncodedTwice = errors.New("server: a lent result was encoded twice")

// AppendJSON appends the result to b and gives its memory back
// (jsonfast.Appender, which the reply's encoder looks for).
func (r *lentResult) AppendJSON(b []byte) ([]byte, error) {
	if r.release == nil {
		return b, errEncodedTwice
	}
	var err error
	if raw, ok := r.value.(jsontext.Value); ok {
		b = append(b, raw...)
	} else {
		b, err = jsonfast.AppendMarshal(b, r.value)
	}
	r.release()
	r.release, r.value = nil, nil
	return b, err
}

// MarshalJSON is AppendJSON for encoders that do not look for it.
func (r *lentResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// HandleMethod makes h serve the requests and notifications of a method
// MCP does not define (a custom method, such as "acme/stats"), in both
// eras, behind the middleware like every other method. A client calls one
// with client.Client.CallMethod; a stateless client's request carries its
// _meta as any other does (the era's rules hold, and req.Stateless() says
// which applies).
//
// It panics, as http.Handle does for a bad pattern, when method is empty,
// is one the server serves itself (tools/call, initialize, ...), or h is
// nil. Registering a method again replaces its handler.
func (s *Server) HandleMethod(method string, h MethodHandler) {
	if method == "" || servedMethods[method] {
		panic(fmt.Sprintf("server: HandleMethod(%q): only methods MCP does not define can be handled", method))
	}
	mustHandler(h == nil, fmt.Sprintf("method %q", method))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.methods == nil {
		s.methods = make(map[string]MethodHandler)
	}
	s.methods[method] = h
}

// customMethod returns the handler of a custom method, or nil.
func (s *Server) customMethod(method string) MethodHandler {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.methods[method]
}

// servedMethods are the methods and notifications the server, or the
// connection under it, serves itself.
var servedMethods = map[string]bool{
	protocol.MethodInitialize: true, protocol.MethodPing: true, protocol.MethodDiscover: true,
	protocol.MethodToolsList: true, protocol.MethodToolsCall: true,
	protocol.MethodResourcesList: true, protocol.MethodResourcesRead: true, protocol.MethodResourcesTemplatesList: true,
	protocol.MethodResourcesSubscribe: true, protocol.MethodResourcesUnsubscribe: true,
	protocol.MethodPromptsList: true, protocol.MethodPromptsGet: true, protocol.MethodComplete: true,
	protocol.MethodSetLevel: true, protocol.MethodSubscriptionsListen: true,
	protocol.NotificationInitialized: true, protocol.NotificationCancelled: true,
	protocol.NotificationRootsListChanged: true, protocol.NotificationProgress: true,
}

// originCtx is a handler's context that also holds the values of the
// HTTP request that carried the message: its own values first (the
// connection's), then the request's. Cancellation and deadline are the
// handler's only: a legacy session's request outlives its POST
// ("disconnection SHOULD NOT be interpreted as the client cancelling its
// request").
type originCtx struct {
	context.Context
	origin context.Context
}

// withOrigin returns the context r's handler runs with: ctx, and when the
// message came with the context of an HTTP request, its values too (in
// r's allocation). It is r's origin, for Header.
func (r *Request) withOrigin(ctx context.Context) context.Context {
	r.oc.Context = ctx
	if r.msg.Context == nil {
		return ctx
	}
	r.oc.origin = r.msg.Context
	return &r.oc
}

func (c *originCtx) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.origin.Value(key)
}
