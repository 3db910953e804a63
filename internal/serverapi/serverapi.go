// Package serverapi is what package server and ferry's transports share
// beyond the server's API for users: the operations on a server that only
// transports use ([Ops]), the way back to a client ([Peer]) and the HTTP
// request a message came in ([Origin]). A transport gets a server's
// operations from the server itself, once, with
//
//	ops := serverapi.OpsOf[*server.Session](s)
//
// (see [Hook]): no package state joins the two.
package serverapi

import (
	"context"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Peer carries messages back to the client a request came from. A
// jsonrpc2.Conn is one; HTTP transports provide their own.
type Peer interface {
	// Notify sends a notification. Transports that have one stream per
	// request route it by the request in ctx.
	Notify(ctx context.Context, method string, params any) error
	// Call sends a server-to-client request (legacy sessions only) and
	// returns the response.
	Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error)
}

// Ops are the operations on a server that only ferry's transports use
// and that are no part of the server's API for users. Sess is
// *server.Session (this package cannot import server, which imports it).
type Ops[Sess any] interface {
	// HandleMessage serves one incoming request or notification and
	// returns the result to send back: sess is the legacy session the
	// message belongs to (nil for a sessionless HTTP request) and peer
	// the way back to the client.
	HandleMessage(ctx context.Context, m *jsonrpc.Message, sess Sess, peer Peer) (any, error)
	// ConnectSession is Server.Connect for transports that name their
	// sessions (an HTTP session's Mcp-Session-Id): it also returns the
	// legacy session of the connection, whose ID is id.
	ConnectSession(ctx context.Context, stream jsonrpc.Stream, id string) (*jsonrpc2.Conn, Sess)
	// CheckRequestMeta checks that a stateless request carries the _meta
	// fields every request must.
	CheckRequestMeta(m *jsonrpc.Message) error
	// CheckVersion returns the UnsupportedProtocolVersionError for a
	// stateless request in revision v, or nil when the server serves v
	// statelessly.
	CheckVersion(v string) error
	// ToolHeaders returns the arguments the input schema of the tool
	// called name mirrors into headers (computed when the tool was
	// added), and whether there is such a tool.
	ToolHeaders(name string) ([]mcpheader.Param, bool)
}

// Hook carries a server's [Ops] to the transports, with no package
// variable and no init function between them: package server embeds a
// Hook in its Server under an unexported name (an alias), which gives
// *server.Server the unexported method hook of this package, and no
// method a user sees; server.New fills it.
type Hook struct{ ops any }

// NewHook returns the Hook of a server whose operations are ops (an
// Ops[*server.Session]).
func NewHook(ops any) Hook { return Hook{ops: ops} }

func (h *Hook) hook() *Hook { return h }

// hooked is a server that embeds a [Hook].
type hooked interface{ hook() *Hook }

// OpsOf returns the operations of s, a *server.Server, for a transport
// to keep: Sess must be *server.Session. It panics for a server that
// server.New did not make, as its methods would.
func OpsOf[Sess any](s hooked) Ops[Sess] {
	ops, ok := s.hook().ops.(Ops[Sess])
	if !ok {
		panic("serverapi: a server not made by server.New")
	}
	return ops
}

// Origin is the context of the HTTP request that carried a message, with
// the request's header (an http.Header), for server.Request.Header. An
// HTTP transport gives one to HandleMessage as its context, or sets it as
// the message's Context; it may be part of a larger allocation.
// RemoteAddr is the request's (an http.Request's RemoteAddr), for
// intercept.ClientKey.
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
