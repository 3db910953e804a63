package jsonrpc

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// init gives ferry's own packages the engine functions that are no part
// of this package's API (see internal/jsonrpcapi).
func init() {
	jsonrpcapi.Member = member
	jsonrpcapi.Unquote = func(raw jsontext.Value) (string, error) { return unquote(raw) }
	jsonrpcapi.MaxSize = func(limit int) int { return Limits{MaxSize: limit}.maxSize() }
	jsonrpcapi.TooLarge = func(n, max int) error { return tooLarge(n, max) }
	jsonrpcapi.TooLargeID = func(n, max int, id []byte, request bool) error {
		e := tooLarge(n, max)
		e.ID, _ = parseID(id)
		e.request = request
		return e
	}
	jsonrpcapi.Set(jsonrpcapi.Engine[*Conn, *Message]{
		Serve:      (*Conn).serve,
		Meta:       func(m *Message) *jsonrpcapi.Meta { return &m.meta },
		Write:      (*Conn).write,
		Call:       (*Conn).callWith,
		EncodeWire: encodeWire,
		Receive:    (*Conn).receive,
		OnClose:    func(c *Conn, f func()) func() bool { return context.AfterFunc(c.ctx, f) },
	})
}

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

// write sends a message as it is (jsonrpcapi.Engine.Write).
func (c *Conn) write(ctx context.Context, m *Message) error { return c.stream.Write(ctx, m) }
