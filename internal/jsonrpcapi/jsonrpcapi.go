// Package jsonrpcapi holds the types that ferry's transports and MCP
// layers share with the JSON-RPC engine (internal/jsonrpc2) beyond what
// package jsonrpc gives users: what the decoder picks out of a message,
// the options of a call, the wire buffer, the Pusher capability. It
// holds no state.
package jsonrpcapi

import (
	"context"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// SniffNames names the members of a message's params that the decoder
// picks out for [Meta]: Meta, an object whose members ProgressToken and
// ProtocolVersion it picks in turn, and Name and Arguments; and the
// members ResultType and IsError of a response's result.
type SniffNames struct {
	Meta, ProgressToken, ProtocolVersion string
	Name, Arguments                      string
	ResultType, IsError                  string
}

// Meta is what the decoder picked out of a request's params, in the same
// pass that validated them, by the names [SniffNames] gives: the MCP layers
// find a request's era, progress token and tool call without decoding
// its params again. The values alias the message's memory.
type Meta struct {
	// Raw is the whole params member SniffNames.Meta, when an object.
	Raw jsontext.Value
	// ProgressToken is the raw value of Raw's member ProgressToken.
	ProgressToken jsontext.Value
	// ProtocolVersion is Raw's member ProtocolVersion, unquoted.
	ProtocolVersion string
	// Name and Arguments are the raw params members of those names, and
	// Extra reports a params member other than those three, so that the
	// common case needs no second walk.
	Name      jsontext.Value
	Arguments jsontext.Value
	Extra     bool
	// ResultType is, for a response whose result is an object, the raw
	// value of the result's member SniffNames.ResultType, and ResultSeen
	// tells that the decoder walked the result's members (ResultType nil
	// then means the result has none): a client passing a 64 KiB result
	// on undecoded finds whether it is complete without a walk of its
	// own.
	ResultType jsontext.Value
	ResultSeen bool
	// IsError is the raw value of the result's member
	// SniffNames.IsError (nil when it has none), picked in the same walk
	// as ResultType: a client's middleware is told whether a tools/call
	// result is a tool error without a walk of its own.
	IsError jsontext.Value
}

// Pusher is implemented by streams whose transport hands over the
// messages that arrive with jsonrpc2.Receive, rather than the connection
// reading them: a connection over one starts no reading goroutine, so
// that between messages it holds none (an HTTP session whose client is
// idle). Its Read is not called.
type Pusher interface {
	PushesMessages()
}

// CallOptions are the options of jsonrpc2.Call. The zero value is a plain
// Conn.Call.
type CallOptions struct {
	// Timeout, when positive, bounds the call: when it passes before the
	// answer comes, the peer is told the call is cancelled and Call returns
	// TimeoutErr(method, Timeout) (which should wrap
	// context.DeadlineExceeded), or context.DeadlineExceeded when
	// TimeoutErr is nil. It costs less than a context with a deadline,
	// whose timer, context and cancellation are made anew for every call:
	// the connection keeps one timer for all its calls' deadlines. The
	// error is made when the time passes, from the call's method, so that
	// options made once serve every call of a caller.
	Timeout    time.Duration
	TimeoutErr func(method string, after time.Duration) error
	// OnID, when set, is given the id of the request before it is sent,
	// for callers that must recognise messages about the request (such as
	// a subscription's notifications) before its response arrives.
	OnID func(id int64)
}

// Expired is the error of a call to method whose Timeout passed.
func (o *CallOptions) Expired(method string) error {
	if o.TimeoutErr == nil {
		return context.DeadlineExceeded
	}
	return o.TimeoutErr(method, o.Timeout)
}
