// Package intercept is the one shape of ferry's middleware, on both
// sides of a connection and in both directions: a [Middleware] wraps a
// [Handler], as net/http's middleware wraps an http.Handler, and every
// handler takes a [Request] and returns a [Result].
//
// A server and a client each have two chains of it:
//
//   - a server's Receiving middleware wraps the serving of what its
//     clients send (requests and notifications); its Sending middleware
//     wraps the requests it sends them (elicitation, sampling, roots);
//   - a client's Sending middleware wraps the requests it sends; its
//     Receiving middleware wraps the answering of the server's requests
//     (sampling, elicitation, roots, ping).
//
// One shape for all four means that what is written once (a log line, a
// span, a metric, an authorization rule) runs on any of them: a gateway,
// which is a server and a client at once, observes what comes in and
// what goes on with the same middleware.
//
// The shape is a function type rather than an interface with one method
// (net/http's Handler and HandlerFunc) because every handler here is a
// closure over the next one: a function type spares the adapter type
// and the conversion at each layer.
//
// The request and result are values the middleware may read and replace,
// not a context: what a handler returns travels back in the [Result]
// (a tool error, lent memory to give back), so that nothing is carried up
// through context values compared by pointer.
//
// A chain without middleware costs nothing: the server and the client
// make a Request only when they have middleware to give it to.
package intercept

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Request is one request or notification as middleware sees it.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// ID is the JSON-RPC id of a request received. It is not valid for a
	// notification, nor for a request being sent: the connection numbers
	// that as it goes out.
	ID jsonrpc.ID
	// ProtocolVersion is the revision the request is served or sent
	// under, and Stateless whether that revision is stateless
	// (2026-07-28 or later).
	ProtocolVersion string
	Stateless       bool
	// Params are the request's params. For a request received they are
	// its raw JSON (a jsontext.Value, nil when absent), which shares the
	// memory of the message it arrived in: copy what outlives the
	// request. For a request being sent they are a value that encodes to
	// them (nil for none); middleware may replace them before calling
	// next.
	Params any
	// Meta is what sending middleware adds to a request's _meta (trace
	// context, for one): nil until middleware sets it. The client that
	// sends the request writes these members into the _meta it sends,
	// over the caller's own members of the same name and under those
	// the protocol puts there (a stateless request's fields, the
	// progress token). It is not read for a request received: its
	// _meta is in Params.
	Meta protocol.Meta
	// Source is what the side that made the request knows of it, read
	// only when middleware asks (a tool's name is not decoded for
	// middleware that never looks at it): the server sets it for a
	// request it received or asks, the client for one it sends. It is
	// nil for a request middleware made, unless that middleware gives it
	// one (a test of middleware that decides on Name, say). A side knows
	// its own requests by their Source: a request given another Source
	// is served as one middleware made.
	Source Source
}

// Source is what the side that made a [Request] knows of it; each method
// returns its zero value for what the request does not have.
type Source interface {
	// Name is the tool of a tools/call, the prompt of a prompts/get, the
	// resource's URI of a resources/read, subscribe or unsubscribe.
	Name() string
	// Arguments are a tools/call's arguments as raw JSON.
	Arguments() jsontext.Value
	// ProgressToken is the request's progress token as raw JSON.
	ProgressToken() jsontext.Value
	// Caller is the authenticated caller a received request came from.
	Caller() *Caller
}

// Name is the tool of a tools/call, the prompt of a prompts/get, the
// resource's URI of a resources/read, subscribe or unsubscribe, as the
// side that made the request decodes it (a received request: as it is
// served, however the sender spelled it); "" for other methods, params
// that do not decode, and requests middleware made itself. Decide on
// Name, never on a search of the raw params.
func (r *Request) Name() string {
	if r.Source == nil {
		return ""
	}
	return r.Source.Name()
}

// Arguments are a tools/call's arguments as raw JSON, nil when there are
// none. A received request's share the message's memory, as Params do.
func (r *Request) Arguments() jsontext.Value {
	if r.Source == nil {
		return nil
	}
	return r.Source.Arguments()
}

// ProgressToken is the request's progress token as raw JSON (a string or
// a number), nil when the request asks for no progress.
func (r *Request) ProgressToken() jsontext.Value {
	if r.Source == nil {
		return nil
	}
	return r.Source.ProgressToken()
}

// Caller is the authenticated caller a received request came from, as
// the authentication in front of the server named it ([WithCaller]); nil
// when none did, and for requests being sent.
func (r *Request) Caller() *Caller {
	if r.Source == nil {
		return nil
	}
	return r.Source.Caller()
}

// Result is what a handler returns for a request; for a notification it
// is dropped.
type Result struct {
	// Value is the result: a value that encodes to the result object, or
	// the object's raw JSON (a jsontext.Value).
	Value any
	// IsError reports a tools/call result that is a tool error (its
	// isError member is true), as whoever made the result knows it, so
	// that middleware need not decode a raw result to count tool errors.
	IsError bool
	// Release, when not nil, gives back the memory Value is in, lent by
	// the transport that read it (a large answer over stdio or
	// Streamable HTTP), to read another message into. Whoever is last to
	// use the result calls it once (a server, once it has written the
	// result to its client); after it, neither Value nor anything that
	// shares its memory may be used. Middleware that replaces Value calls
	// it first, or drops it and leaves the memory to the collector.
	Release func()
}

// Handler serves one request: it returns its result or an error (a
// *[jsonrpc.Error] is sent as it is).
type Handler func(ctx context.Context, req *Request) (Result, error)

// Middleware wraps a handler: it may look at the request, answer it
// itself, or call next (with a context of its own, net/http style:
// context.WithValue for what the handlers below should see) and look at
// or replace its result.
type Middleware func(next Handler) Handler

// Chain returns h wrapped in mw, the first element outermost: the order
// in which they see a request. With no middleware it returns h.
func Chain(h Handler, mw ...Middleware) Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}
