package jsonrpc2

import (
	"sync"

	"github.com/ferrymcp/ferry/internal/jsonfast"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// AppendMessage appends the wire form of m (without a trailing newline) to
// b. A Body is marshalled directly after the envelope; raw Params and Result
// are copied as they are.
func AppendMessage(b []byte, m *Message) ([]byte, error) {
	return appendMessage(b, m, appendValue)
}

// appendMessage appends m's envelope, with appendBody encoding its Body.
func appendMessage(b []byte, m *Message, appendBody func([]byte, any) ([]byte, error)) ([]byte, error) {
	b = append(b, `{"jsonrpc":"2.0"`...)
	if m.ID.IsValid() || (m.Method == "" && m.Error != nil) {
		b = append(b, `,"id":`...)
		b = m.ID.appendJSON(b)
	}
	var err error
	switch {
	case m.Method != "":
		b = append(b, `,"method":`...)
		b, _ = jsontext.AppendQuote(b, m.Method)
		if m.Body != nil {
			b = append(b, `,"params":`...)
			if b, err = appendBody(b, m.Body); err != nil {
				return b, err
			}
		} else if m.Params != nil {
			b = append(b, `,"params":`...)
			b = append(b, m.Params...)
		}
	case m.Error != nil:
		b = append(b, `,"error":{"code":`...)
		b = Int64ID(m.Error.Code).appendJSON(b)
		b = append(b, `,"message":`...)
		b, _ = jsontext.AppendQuote(b, m.Error.Message)
		if len(m.Error.Data) > 0 {
			b = append(b, `,"data":`...)
			b = append(b, m.Error.Data...)
		}
		b = append(b, '}')
	default:
		b = append(b, `,"result":`...)
		switch {
		case m.Body != nil:
			if b, err = appendBody(b, m.Body); err != nil {
				return b, err
			}
		case m.Result != nil:
			b = append(b, m.Result...)
		default:
			b = append(b, "{}"...)
		}
	}
	return append(b, '}'), nil
}

// appendWriter lets json.MarshalWrite append to a byte slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

var appendWriters = sync.Pool{New: func() any { return new(appendWriter) }}

func appendValue(b []byte, v any) ([]byte, error) {
	var err error
	switch v := v.(type) {
	case jsontext.Value:
		return append(b, v...), nil
	case []byte:
		return append(b, v...), nil
	case jsonfast.Appender:
		b, err = v.AppendJSON(b)
	default:
		b, err = marshalAppend(b, v)
	}
	return b, encodeError(err)
}

func marshalAppend(b []byte, v any) ([]byte, error) {
	w := appendWriters.Get().(*appendWriter)
	w.b = b
	err := json.MarshalWrite(w, v)
	b = w.b
	w.b = nil
	appendWriters.Put(w)
	return b, err
}

func encodeError(err error) error {
	if err != nil {
		return errorf(CodeInternalError, "cannot encode message: %v", err)
	}
	return nil
}

// Marshal encodes m into a new slice.
func Marshal(m *Message) ([]byte, error) { return AppendMessage(nil, m) }
