package ssewire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// normalizeLines turns CRLF and CR into LF, as a round trip through the
// event stream format does.
func normalizeLines(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	b = bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
	if b == nil {
		b = []byte{}
	}
	return b
}

// FuzzReader checks that the reader never panics on any input, stays
// within its bound, and reads back what AppendEvent wrote.
func FuzzReader(f *testing.F) {
	f.Add([]byte("event: endpoint\ndata: /message?sessionId=1\n\n"), "1", "message", []byte(`{"jsonrpc":"2.0"}`), 0)
	f.Add([]byte("\xEF\xBB\xBFid: 1\r\rdata\r\n:\r\n\r\n"), "", "", []byte("a\r\nb\rc\n"), 1500)
	f.Add([]byte("data: 0123456789012345678901234567890123456789\n\ndata: x\n\n"), "x\x00\ny", "e\r", []byte{}, -1)
	f.Add([]byte("data: 0123456789012345678901234567890123456789012345678901234567\n\n"), "", "", []byte("x"), 0)
	f.Fuzz(func(t *testing.T, input []byte, id, name string, data []byte, retryMs int) {
		// Arbitrary input, small limit: no panic, no event over the limit,
		// and reading whole or byte by byte agrees.
		const max = 64
		var got [2]string
		for i, src := range []io.Reader{bytes.NewReader(input), iotest.OneByteReader(bytes.NewReader(input))} {
			r := NewReader(src, max)
			var b strings.Builder
			for range len(input) + 1 {
				e, err := r.Next()
				if errors.Is(err, ErrEventTooLarge) {
					b.WriteString("[too large]")
					continue
				}
				if err != nil {
					if err != io.EOF {
						t.Fatalf("error %v, want EOF", err)
					}
					break
				}
				if len(e.Data) > max || len(e.Name) > max || len(e.ID) > max {
					t.Fatalf("event over the limit of %d bytes: %+v", max, e)
				}
				b.WriteString(describeEvents([]Event{e}))
			}
			b.WriteString("last=" + r.LastEventID())
			got[i] = b.String()
		}
		if got[0] != got[1] {
			t.Fatalf("whole: %s\nbyte by byte: %s", got[0], got[1])
		}

		// Round trip.
		retryMs %= 1e12
		in := Event{ID: id, Name: name, Data: data, HasRetry: retryMs >= 0, Retry: time.Duration(retryMs) * time.Millisecond}
		wire := AppendEvent(AppendComment(nil, name), in)
		wire = AppendEvent(wire, Event{Data: []byte("second")})
		r := NewReader(bytes.NewReader(wire), 0)
		e, err := r.Next()
		if err != nil {
			t.Fatalf("reading %q back: %v", wire, err)
		}
		wantID := strings.NewReplacer("\r", "", "\n", "", "\x00", "").Replace(id)
		wantName := strings.NewReplacer("\r", "", "\n", "").Replace(name)
		if wantName == "" {
			wantName = "message"
		}
		if e.ID != wantID || e.Name != wantName || !bytes.Equal(e.Data, normalizeLines(data)) || e.HasRetry != in.HasRetry || (in.HasRetry && e.Retry != in.Retry) {
			t.Fatalf("round trip of %+v\nwire %q\ngot %+v", in, wire, e)
		}
		e, err = r.Next()
		if err != nil || string(e.Data) != "second" || e.ID != wantID {
			t.Fatalf("second event %+v %v", e, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the events: %v", err)
		}
	})
}
