// Package jsonrpcapi is the seam between package jsonrpc and the rest of
// ferry: the parts of the JSON-RPC engine that ferry's transports and MCP
// layers use but that are no part of jsonrpc's public API, so that the
// engine can change without breaking anyone. It follows grpc-go's
// internal package: package jsonrpc fills it in its init, once, before
// any package that imports jsonrpc can run; nothing changes it after.
//
// Functions that handle jsonrpc's own types are in [Engine], whose type
// parameters stand for them (this package cannot import jsonrpc, which
// imports it); a package gets them typed, once, with
//
//	var rpc = jsonrpcapi.Get[*jsonrpc.Conn, *jsonrpc.Message]()
package jsonrpcapi

import (
	"context"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Set by package jsonrpc's init; never changed after.
var (
	// Member returns the raw value of the top-level member name of the
	// JSON object obj, walking only the object's top level (nested values
	// are skipped, not decoded). Transports use it to compare HTTP headers
	// with the body (Mcp-Name against params.name) without decoding the
	// params.
	Member func(obj jsontext.Value, name string) (jsontext.Value, bool, error)
	// Unquote decodes a JSON string token.
	Unquote func(raw jsontext.Value) (string, error)
	// MaxSize is the size limit a jsonrpc.Limits with MaxSize limit puts
	// on a message.
	MaxSize func(limit int) int
	// TooLarge is the *jsonrpc.DecodeError a stream's Read returns for a
	// message of n bytes over the limit max.
	TooLarge func(n, max int) error
	// TooLargeID is TooLarge for a message whose id (raw JSON) could be
	// read from its first or last bytes; request tells that it had a
	// "method" member: it was the peer's request, not an answer.
	TooLargeID func(n, max int, id []byte, request bool) error
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

// Engine holds the operations on jsonrpc's types that only ferry's own
// packages use. C is *jsonrpc.Conn and M is *jsonrpc.Message.
type Engine[C, M any] struct {
	// Serve handles an incoming request on the calling goroutine, with
	// the connection's bookkeeping (cancellation by the peer, the bound
	// on requests in flight, panics turned into errors), and returns the
	// reply to send, or nil when there is none (the peer cancelled the
	// request, or the connection closed). Transports that answer each
	// request on a response of its own (an HTTP POST) use it rather than
	// hand the request to the connection's reader and wait for the reply:
	// it saves two goroutine switches per request.
	Serve func(c C, m M) M
	// Meta returns what the decoder picked out of m's params (see
	// [SniffNames]); zero for a message that was not decoded or has no params.
	Meta func(m M) *Meta
	// Write sends a message through the connection's stream as it is;
	// transports that route messages (an HTTP session answering on a
	// request's own stream) use it, so that wrappers of the stream see it.
	Write func(c C, ctx context.Context, m M) error
	// Call is Conn.Call with options.
	Call func(c C, ctx context.Context, method string, params any, o *CallOptions) (M, error)
	// EncodeWire replaces the contents of w with m's encoding.
	EncodeWire func(w *Wire, m M) error
	// Receive hands the connection a message that arrived, over a stream
	// that implements [Pusher]: it goes where the connection's reading
	// goroutine would send it. It reports false once the connection is
	// closed.
	Receive func(c C, m M) bool
	// OnClose calls f, on a goroutine of its own, once the connection
	// closed; stop cancels that (see context.AfterFunc).
	OnClose func(c C, f func()) (stop func() bool)
}

// Pusher is implemented by streams whose transport hands over the
// messages that arrive with [Engine].Receive, rather than the connection
// reading them: a connection over one starts no reading goroutine, so
// that between messages it holds none (an HTTP session whose client is
// idle). Its Read is not called.
type Pusher interface {
	PushesMessages()
}

// CallOptions are the options of [Engine].Call. The zero value is a plain
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

var engine any

// Set is called once, by package jsonrpc's init.
func Set[C, M any](e Engine[C, M]) { engine = e }

// Get returns the engine package jsonrpc set; C and M must be
// *jsonrpc.Conn and *jsonrpc.Message.
func Get[C, M any]() Engine[C, M] { return engine.(Engine[C, M]) }
