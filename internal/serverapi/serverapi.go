// Package serverapi is the seam between package server and ferry's
// transports: the operations on a server.Server that the transports need
// and that are no part of the server's API for users. It follows
// grpc-go's internal package: package server fills it in its init, once,
// before any package that imports server can run; nothing changes it
// after.
//
// The functions are in [Server], whose type parameters stand for
// *server.Server, *server.Session and *server.Request (this package
// cannot import server, which imports it); a transport gets them typed,
// once, with
//
//	var srv = serverapi.Get[*server.Server, *server.Session, *server.Request]()
package serverapi

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Peer carries messages back to the client a request came from. A
// jsonrpc.Conn is one; HTTP transports provide their own.
type Peer interface {
	// Notify sends a notification. Transports that have one stream per
	// request route it by the request in ctx.
	Notify(ctx context.Context, method string, params any) error
	// Call sends a server-to-client request (legacy sessions only) and
	// returns the response.
	Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error)
}

// Server holds the operations on a server that only transports (and
// ferry's own middleware) use. S is *server.Server, Sess *server.Session
// and Req *server.Request.
type Server[S, Sess, Req any] struct {
	// HandleMessage serves one incoming request or notification and
	// returns the result to send back: sess is the legacy session the
	// message belongs to (nil for a sessionless HTTP request) and peer
	// the way back to the client.
	HandleMessage func(s S, ctx context.Context, m *jsonrpc.Message, sess Sess, peer Peer) (any, error)
	// ConnectSession is Server.Connect for transports that name their
	// sessions (an HTTP session's Mcp-Session-Id): it also returns the
	// legacy session of the connection, whose ID is id.
	ConnectSession func(s S, ctx context.Context, stream jsonrpc.Stream, id string) (*jsonrpc.Conn, Sess)
	// CheckRequestMeta checks that a stateless request carries the _meta
	// fields every request must.
	CheckRequestMeta func(s S, m *jsonrpc.Message) error
	// CheckVersion returns the UnsupportedProtocolVersionError for a
	// stateless request in revision v, or nil when the server serves v
	// statelessly.
	CheckVersion func(s S, v string) error
	// ToolHeaders returns the arguments the input schema of the tool
	// called name mirrors into headers (computed when the tool was
	// added), and whether there is such a tool.
	ToolHeaders func(s S, name string) ([]mcpheader.Param, bool)
	// Sniffed returns what the JSON-RPC decoder picked out of a request's
	// params while it validated them (a tools/call's name and arguments,
	// its _meta): middleware that forwards or observes a request finds
	// them there without walking the params again. It is never nil; zero
	// for a request whose message was not decoded.
	Sniffed func(r Req) *jsonrpcapi.Meta
}

// Name returns the raw "name" member of a request's params (a
// tools/call's, a prompts/get's) as the JSON-RPC decoder picked it out
// (sn, from [Server.Sniffed]), or by a walk of params when it picked none
// (a message that was not decoded); walked tells which, and that what sn
// says of the other members is then not known either. Nil when params
// have no such member.
func Name(sn *jsonrpcapi.Meta, params jsontext.Value) (name jsontext.Value, walked bool) {
	if sn.Name != nil {
		return sn.Name, false
	}
	name, ok, err := jsonrpc2.Member(params, "name")
	if err != nil || !ok {
		return nil, true
	}
	return name, true
}

// Origin is the context of the HTTP request that carried a message, with
// the request's header (an http.Header), for server.Request.Header. An
// HTTP transport gives one to HandleMessage as its context, or sets it as
// the message's Context; it may be part of a larger allocation.
// RemoteAddr is the request's (an http.Request's RemoteAddr), for
// [ClientKey].
type Origin struct {
	context.Context
	Header     map[string][]string
	RemoteAddr string
}

// headerKey is the context key of an Origin's header.
type headerKey struct{}

// Value returns the header for headerKey, the remote address for
// remoteAddrKey, else the request context's value.
func (o *Origin) Value(key any) any {
	switch key.(type) {
	case headerKey:
		return o.Header
	case remoteAddrKey:
		return o.RemoteAddr
	}
	return o.Context.Value(key)
}

// HeaderOf returns the header of the Origin ctx holds.
func HeaderOf(ctx context.Context) (map[string][]string, bool) {
	h, ok := ctx.Value(headerKey{}).(map[string][]string)
	return h, ok
}

var server any

// Set is called once, by package server's init.
func Set[S, Sess, Req any](f Server[S, Sess, Req]) { server = f }

// Get returns the functions package server set; S, Sess and Req must be
// *server.Server, *server.Session and *server.Request.
func Get[S, Sess, Req any]() Server[S, Sess, Req] { return server.(Server[S, Sess, Req]) }
