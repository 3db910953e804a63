package jsonrpc2

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// The functions below are what ferry's transports and MCP layers use of
// the engine beyond the public API that package jsonrpc gives users:
// they are functions, not methods, so that the aliases of package
// jsonrpc do not carry them.

// Member returns the raw value of the top-level member name of the JSON
// object obj, walking only the object's top level (nested values are
// skipped, not decoded). Transports use it to compare HTTP headers with
// the body (Mcp-Name against params.name) without decoding the params.
func Member(obj jsontext.Value, name string) (jsontext.Value, bool, error) { return member(obj, name) }

// Unquote decodes a JSON string token.
func Unquote(raw jsontext.Value) (string, error) { return unquote(raw) }

// MaxSize is the size limit a Limits with MaxSize limit puts on a
// message.
func MaxSize(limit int) int { return Limits{MaxSize: limit}.maxSize() }

// TooLarge is the *DecodeError a stream's Read returns for a message of n
// bytes over the limit max.
func TooLarge(n, max int) error { return tooLarge(n, max) }

// TooLargeID is TooLarge for a message whose id (raw JSON) could be read
// from its first or last bytes; request tells that it had a "method"
// member: it was the peer's request, not an answer.
func TooLargeID(n, max int, id []byte, request bool) error {
	e := tooLarge(n, max)
	e.ID, _ = parseID(id)
	e.request = request
	return e
}

// Serve handles an incoming request on the calling goroutine, with the
// connection's bookkeeping (cancellation by the peer, the bound on
// requests in flight, panics turned into errors), and returns the reply
// to send, or nil when there is none (the peer cancelled the request, or
// the connection closed). Transports that answer each request on a
// response of its own (an HTTP POST) use it rather than hand the request
// to the connection's reader and wait for the reply: it saves two
// goroutine switches per request.
func Serve(c *Conn, m *Message) *Message { return c.serve(m) }

// Meta returns what the decoder picked out of m's params (see
// jsonrpcapi.SniffNames); zero for a message that was not decoded or has
// no params.
func Meta(m *Message) *jsonrpcapi.Meta { return &m.meta }

// Write sends a message through the connection's stream as it is;
// transports that route messages (an HTTP session answering on a
// request's own stream) use it, so that wrappers of the stream see it.
func Write(c *Conn, ctx context.Context, m *Message) error { return c.write(ctx, m) }

// Call is Conn.Call with options.
func Call(c *Conn, ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*Message, error) {
	return c.callWith(ctx, method, params, o)
}

// EncodeWire replaces the contents of w with m's encoding, referring to
// the long strings of bodies that encode themselves into a jsonfast.Out.
func EncodeWire(w *jsonrpcapi.Wire, m *Message) error { return encodeWire(w, m) }

// Receive hands the connection a message that arrived, over a stream
// that implements jsonrpcapi.Pusher: it goes where the connection's
// reading goroutine would send it. It reports false once the connection
// is closed.
func Receive(c *Conn, m *Message) bool { return c.receive(m) }

// OnClose calls f, on a goroutine of its own, once the connection
// closed; stop cancels that (see context.AfterFunc).
func OnClose(c *Conn, f func()) (stop func() bool) { return context.AfterFunc(c.ctx, f) }

// encodeWire replaces the contents of w with m's encoding, referring to
// the long strings of bodies that encode themselves into a jsonfast.Out.
func encodeWire(w *jsonrpcapi.Wire, m *Message) error {
	w.Reset()
	w.Out.RefMin = jsonrpcapi.WireRefMin
	var err error
	w.Out.B, err = appendMessage(w.Out.B, m, func(b []byte, v any) ([]byte, error) {
		oa, ok := v.(jsonfast.OutAppender)
		if !ok {
			return appendValue(b, v)
		}
		w.Out.B = b
		err := oa.AppendOut(&w.Out)
		return w.Out.B, encodeError(err)
	})
	return err
}

// write sends a message as it is (Write).
func (c *Conn) write(ctx context.Context, m *Message) error { return c.stream.Write(ctx, m) }
