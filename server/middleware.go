package server

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"
)

// A MethodHandler serves one request of a client: it returns the result to
// send back (any value that encodes to the result object, or raw JSON) or
// an error (a *[jsonrpc.Error] is sent as it is).
type MethodHandler func(ctx context.Context, req *Request) (any, error)

// Middleware wraps the serving of requests, as net/http's middleware
// wraps an http.Handler: it sees every request after the era and the
// session are settled (initialize and ping of legacy sessions excepted),
// and may answer it itself or call next.
type Middleware func(next MethodHandler) MethodHandler

// Params returns the request's params as they arrived (nil when absent).
// They share the message's memory, as [Request.RawMeta] does.
func (r *Request) Params() jsontext.Value { return r.msg.Params }

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
	if r.stateless {
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
