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

// readAll returns every event of input, read through a one-byte reader
// and a whole reader alike (their results must agree), and the final
// last event ID.
func readAll(t *testing.T, input string, max int) ([]Event, string, error) {
	t.Helper()
	var results [2][]Event
	var lastIDs [2]string
	var errs [2]error
	for i, src := range []io.Reader{strings.NewReader(input), iotest.OneByteReader(strings.NewReader(input))} {
		r := NewReader(src, max)
		for {
			e, err := r.Next()
			if err != nil {
				if errors.Is(err, ErrEventTooLarge) {
					results[i] = append(results[i], Event{Name: "TOO LARGE"})
					continue
				}
				errs[i] = err
				break
			}
			results[i] = append(results[i], e)
		}
		lastIDs[i] = r.LastEventID()
	}
	if got, want := describeEvents(results[1]), describeEvents(results[0]); got != want {
		t.Errorf("byte by byte: %s\nwhole: %s", got, want)
	}
	if lastIDs[0] != lastIDs[1] {
		t.Errorf("last id byte by byte %q, whole %q", lastIDs[1], lastIDs[0])
	}
	return results[0], lastIDs[0], errs[0]
}

func describeEvents(es []Event) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("[id=" + e.ID + " name=" + e.Name + " data=" + string(e.Data))
		if e.HasRetry {
			b.WriteString(" retry=" + e.Retry.String())
		}
		b.WriteString("]")
	}
	return b.String()
}

func TestReader(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		max    int
		want   string
		lastID string
	}{
		{"simple", "data: hello\n\n", 0, "[id= name=message data=hello]", ""},
		{"named with id", "event: endpoint\nid: 1\ndata: /m?s=1\n\n", 0, "[id=1 name=endpoint data=/m?s=1]", "1"},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", 0, "[id= name=message data=a\nb\n c]", ""},
		{"CRLF", "event: x\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n", 0, "[id= name=x data=1][id= name=message data=2]", ""},
		{"CR", "data: 1\rdata: 2\r\rdata: 3\r\r", 0, "[id= name=message data=1\n2][id= name=message data=3]", ""},
		{"mixed endings", "data: 1\r\n\ndata: 2\r\r\ndata: 3\n\r", 0, "[id= name=message data=1][id= name=message data=2][id= name=message data=3]", ""},
		{"BOM", "\xEF\xBB\xBFdata: x\n\n", 0, "[id= name=message data=x]", ""},
		{"only one BOM", "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n", 0, "[id= name=message data=y]", ""},
		{"comments", ": hello\n:\ndata: x\n: inside\n\n", 0, "[id= name=message data=x]", ""},
		{"field without colon", "data\n\ndata\ndata\n\n", 0, "[id= name=message data=][id= name=message data=\n]", ""},
		{"empty data line dispatches", "id: 7\ndata:\n\n", 0, "[id=7 name=message data=]", "7"},
		{"no data: not dispatched", "id: 3\n\nevent: x\n\nretry: 5\n\ndata: y\n\n", 0, "[id=3 name=message data=y]", "3"},
		{"id-only block at the end", "data: a\n\nid: 9\n\n", 0, "[id= name=message data=a]", "9"},
		{"id persists, empty id resets", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", 0, "[id=1 name=message data=a][id=1 name=message data=b][id= name=message data=c]", ""},
		{"id with NUL ignored", "id: 1\n\nid: 2\x003\ndata: a\n\n", 0, "[id=1 name=message data=a]", "1"},
		{"event name does not persist", "event: e\ndata: 1\n\ndata: 2\n\n", 0, "[id= name=e data=1][id= name=message data=2]", ""},
		{"retry", "retry: 1500\ndata: a\n\nretry: x1\ndata: b\n\nretry:\ndata: c\n\n", 0, "[id= name=message data=a retry=1.5s][id= name=message data=b][id= name=message data=c]", ""},
		{"one space only", "data:   x  \n\n", 0, "[id= name=message data=  x  ]", ""},
		{"unknown field", "foo: bar\ndata: x\n\n", 0, "[id= name=message data=x]", ""},
		{"field names are case-sensitive", "Data: x\nDATA: y\ndata: z\n\n", 0, "[id= name=message data=z]", ""},
		{"incomplete event at EOF", "data: a\n\ndata: b\n", 0, "[id= name=message data=a]", ""},
		{"incomplete line at EOF", "data: a\n\ndata: b", 0, "[id= name=message data=a]", ""},
		{"incomplete id at EOF", "data: a\n\nid: 4\n", 0, "[id= name=message data=a]", ""},
		{"invalid UTF-8 kept", "data: \xff\xfe\n\n", 0, "[id= name=message data=\xff\xfe]", ""},
		{"too large line", "data: 0123456789012345678901234567890123456789\ndata: more\n\ndata: ok\n\n", 32, "[id= name=TOO LARGE data=][id= name=message data=ok]", ""},
		{"too large over lines", "data: 0123456789\ndata: 0123456789\ndata: 0123456789\ndata: 0123\n\ndata: ok\n\n", 32, "[id= name=TOO LARGE data=][id= name=message data=ok]", ""},
		{"just under the limit", "data: 01234567890123456789\n\n", 32, "[id= name=message data=01234567890123456789]", ""},
		{"too large, then CR endings", "data: 0123456789012345678901234567890123456789\rdata: x\r\rdata: ok\r\r", 32, "[id= name=TOO LARGE data=][id= name=message data=ok]", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, lastID, err := readAll(t, tt.input, tt.max)
			if err != io.EOF {
				t.Errorf("final error %v, want EOF", err)
			}
			if got := describeEvents(events); got != tt.want {
				t.Errorf("events\n got %s\nwant %s", got, tt.want)
			}
			if lastID != tt.lastID {
				t.Errorf("LastEventID %q, want %q", lastID, tt.lastID)
			}
		})
	}
}

func TestReaderLongLines(t *testing.T) {
	// Lines much longer than the reader's buffer, within the limit.
	big := strings.Repeat("x", 100<<10)
	input := "data: " + big + "\r\ndata: " + big + "\r\n\r\n"
	events, _, err := readAll(t, input, 1<<20)
	if err != io.EOF || len(events) != 1 || string(events[0].Data) != big+"\n"+big {
		t.Fatalf("%d events, %v", len(events), err)
	}
}

func TestReaderTooLargeDoesNotBuffer(t *testing.T) {
	// An endless line: Next must give up at the limit, not read on.
	endless := io.MultiReader(strings.NewReader("data: "), infinite('a'))
	r := NewReader(endless, 1<<16)
	_, err := r.Next()
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("Next: %v", err)
	}
	if !strings.Contains(err.Error(), "65536") {
		t.Errorf("error does not say the limit: %v", err)
	}
}

type infinite byte

func (c infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(c)
	}
	return len(p), nil
}

func TestReaderRetryAndErrors(t *testing.T) {
	r := NewReader(strings.NewReader("retry: 2000\n\nretry: 99999999999999999999\ndata: x\n\n"), 0)
	e, err := r.Next()
	if err != nil || !e.HasRetry || e.Retry <= 0 {
		t.Fatalf("%+v %v", e, err)
	}
	if d, ok := r.Retry(); !ok || d != e.Retry {
		t.Errorf("Retry() = %v %v", d, ok)
	}
	boom := errors.New("boom")
	r = NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(boom)), 0)
	if e, err := r.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("%+v %v", e, err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("error %v, want boom", err)
	}
}

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		e    Event
		want string
	}{
		{Event{Data: []byte("x")}, "data: x\n\n"},
		{Event{}, "data: \n\n"},
		{Event{ID: "1", Name: "message", Data: []byte(`{"a":1}`)}, "id: 1\nevent: message\ndata: {\"a\":1}\n\n"},
		{Event{Data: []byte("a\nb\r\nc\rd\n")}, "data: a\ndata: b\ndata: c\ndata: d\ndata: \n\n"},
		{Event{ID: "a\nb\x00c", Name: "x\r\ny", Data: []byte("z")}, "id: abc\nevent: xy\ndata: z\n\n"},
		{Event{Retry: 1500 * time.Millisecond, HasRetry: true, Data: []byte("r")}, "retry: 1500\ndata: r\n\n"},
		{Event{Retry: -time.Second, HasRetry: true}, "retry: 0\ndata: \n\n"},
	}
	for _, tt := range tests {
		if got := string(AppendEvent(nil, tt.e)); got != tt.want {
			t.Errorf("AppendEvent(%+v) = %q, want %q", tt.e, got, tt.want)
		}
	}
	comments := map[string]string{"": ":\n\n", "ping": ": ping\n\n", "a\nb\r\nc": ": a\n: b\n: c\n\n"}
	for text, want := range comments {
		if got := string(AppendComment(nil, text)); got != want {
			t.Errorf("AppendComment(%q) = %q, want %q", text, got, want)
		}
	}
	// What AppendEvent writes, a Reader reads back.
	var stream []byte
	stream = AppendComment(stream, "hello")
	for _, tt := range tests {
		stream = AppendEvent(stream, tt.e)
	}
	r := NewReader(bytes.NewReader(stream), 0)
	for _, tt := range tests {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := normalizeLines(tt.e.Data); !bytes.Equal(e.Data, want) {
			t.Errorf("data %q, want %q", e.Data, want)
		}
	}
}
