package server

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// A MethodHandler serves one message of a client: for a request, it
// returns the result to send back (any value that encodes to the result
// object, or raw JSON) or an error (a *[jsonrpc.Error] is sent as it is);
// for a notification (req.ID is not valid), what it returns is dropped.
type MethodHandler func(ctx context.Context, req *Request) (any, error)

// Middleware wraps the serving of messages, as net/http's middleware
// wraps an http.Handler: it sees every request and notification of a
// client once its era and session are settled (a legacy session's
// initialize and ping included), with its method and params, and may
// answer it itself or call next, with a context of its own (net/http
// style: context.WithValue for what the handler should see). Middleware
// and handler see the same *Request.
//
// The context carries the values of the HTTP request that carried the
// message, in both eras (see [Request.Header]): an authorization
// middleware finds there what the HTTP layer validated.
//
// A server without middleware pays nothing for it.
type Middleware func(next MethodHandler) MethodHandler

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
func (r *Request) Lend() { r.msg.Borrowed = true }

// handle serves r through the middleware.
func (s *Server) handle(ctx context.Context, r *Request) (any, error) {
	if s.chain == nil {
		return s.method(ctx, r)
	}
	return s.chain(ctx, r)
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

// buildChain composes the middleware of the options around method.
func (s *Server) buildChain() {
	if len(s.opts.Middleware) == 0 {
		return
	}
	h := s.method
	for i := len(s.opts.Middleware) - 1; i >= 0; i-- {
		h = s.opts.Middleware[i](h)
	}
	s.chain = h
}

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
