package jsonrpc2

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
)

// textBody encodes itself into an Out, as ferry's tool results do.
type textBody struct{ text string }

func (b *textBody) AppendOut(o *jsonfast.Out) error {
	o.B = append(o.B, `{"text":`...)
	if err := o.Quote(b.text); err != nil {
		return err
	}
	o.B = append(o.B, '}')
	return nil
}

func (b *textBody) AppendJSON(dst []byte) ([]byte, error) {
	o := jsonfast.Out{B: dst}
	err := b.AppendOut(&o)
	return o.B, err
}

// A Wire's pieces join into what AppendMessage writes; it refers to a
// long plain string only.
func TestWireMatchesAppendMessage(t *testing.T) {
	long := strings.Repeat("z", jsonrpcapi.WireRefMin)
	for _, tc := range []struct {
		name  string
		m     *Message
		refer bool
	}{
		{"short result", &Message{ID: Int64ID(1), Body: &textBody{"hi"}}, false},
		{"long result", &Message{ID: Int64ID(2), Body: &textBody{long}}, true},
		{"long escaped", &Message{ID: Int64ID(3), Body: &textBody{long + "\n"}}, false},
		{"long params", &Message{ID: StringID("x"), Method: "m", Body: &textBody{long}}, true},
		{"raw result", &Message{ID: Int64ID(4), Result: jsontext.Value(`{"a":1}`)}, false},
		{"marshalled", &Message{Method: "n", Body: map[string]string{"k": long}}, false},
		{"error", &Message{ID: Int64ID(5), Error: &Error{Code: CodeInternalError, Message: "boom"}}, false},
	} {
		want, err := AppendMessage(nil, tc.m)
		if err != nil {
			t.Fatal(err)
		}
		var w jsonrpcapi.Wire
		if err := encodeWire(&w, tc.m); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := bytes.Join(w.Buffers(nil), nil)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: wire %.60q, want %.60q", tc.name, got, want)
		}
		if w.Refers() != tc.refer || w.Len() != len(want) {
			t.Errorf("%s: Refers %v Len %d, want %v %d", tc.name, w.Refers(), w.Len(), tc.refer, len(want))
		}
		if !tc.refer && !bytes.Equal(w.Bytes(), want) {
			t.Errorf("%s: Bytes is not the whole encoding", tc.name)
		}
	}
}

// Encoding anew, and Reset, forget the strings referred to.
func TestWireReuse(t *testing.T) {
	var w jsonrpcapi.Wire
	encodeWire(&w, &Message{ID: Int64ID(1), Body: &textBody{strings.Repeat("a", jsonrpcapi.WireRefMin)}})
	if err := encodeWire(&w, &Message{ID: Int64ID(2), Body: &textBody{"b"}}); err != nil {
		t.Fatal(err)
	}
	if w.Refers() || string(w.Bytes()) != `{"jsonrpc":"2.0","id":2,"result":{"text":"b"}}` {
		t.Errorf("reused wire: %q, refers %v", w.Bytes(), w.Refers())
	}
	w.Write([]byte("\n"))
	if !bytes.HasSuffix(w.Bytes(), []byte("}\n")) {
		t.Errorf("Write did not append: %q", w.Bytes())
	}
}
