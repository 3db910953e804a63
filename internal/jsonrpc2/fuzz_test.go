package jsonrpc2

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
)

// seeds are inputs for every fuzz target: the decoder tables, and a few
// messages of each shape.
func seeds() [][]byte {
	var s [][]byte
	add := func(in string) {
		if len(in) < 1<<16 {
			s = append(s, []byte(in))
		}
	}
	for _, tc := range acceptTests {
		add(tc.in)
	}
	for _, tc := range rejectTests {
		add(tc.in)
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Paris"},"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],"isError":false}}`,
		`{"jsonrpc":"2.0","id":"a","error":{"code":-32602,"message":"bad","data":[1,{"a":null}]}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"\u005fmeta":{"progress\u0054oken":-0}}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"m","params":[]}`,
		`{"\ud800":1,"\\ud800":2}`,
		`[1,"\ud83d\ude00",{"a":{"b":[true,false,null,-1.5e-3]}}]`,
	} {
		add(in)
	}
	return s
}

// FuzzDecode checks that Decode never panics, accepts only valid JSON,
// rejects with a *DecodeError, and that whatever it accepts survives a
// round trip through AppendMessage unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{MaxSize: 1 << 20, MaxDepth: 32}
		m, err := Decode(data, lim)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Err == nil {
				t.Fatalf("error %T %v is not a *DecodeError", err, err)
			}
			if m != nil {
				t.Fatalf("message returned with an error")
			}
			switch de.Err.Code {
			case CodeParseError, CodeInvalidRequest, CodeInvalidParams:
			default:
				t.Fatalf("unexpected code %d: %v", de.Err.Code, err)
			}
			if json.Valid(data) && de.Err.Code == CodeParseError && utf8.Valid(data) && !hasDuplicateNames(data) && depth(data) <= lim.MaxDepth && !strings.Contains(de.Err.Message, "protocol version") {
				t.Fatalf("valid JSON rejected as a parse error: %v", err)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("Decode accepted invalid JSON")
		}
		if !utf8.Valid(data) {
			t.Fatalf("Decode accepted invalid UTF-8")
		}
		if d := depth(data); d > lim.MaxDepth {
			t.Fatalf("Decode accepted depth %d over the limit %d", d, lim.MaxDepth)
		}
		if m.Size != len(data) {
			t.Fatalf("Size = %d, want %d", m.Size, len(data))
		}
		kinds := 0
		for _, k := range []bool{m.IsRequest(), m.IsNotification(), m.IsResponse()} {
			if k {
				kinds++
			}
		}
		if kinds != 1 {
			t.Fatalf("message is of %d kinds", kinds)
		}
		if m.IsResponse() && (m.Error == nil) == (m.Result == nil) {
			t.Fatalf("response with result %s and error %v", m.Result, m.Error)
		}
		if m.IsResponse() && m.Result != nil && !m.ID.IsValid() {
			t.Fatalf("result without an id")
		}

		b, err := AppendMessage(nil, m)
		if err != nil {
			t.Fatalf("AppendMessage: %v", err)
		}
		m2, err := Decode(b, Limits{MaxDepth: lim.MaxDepth})
		if err != nil {
			t.Fatalf("re-encoded message %s does not decode: %v", b, err)
		}
		if diff := compareMessages(m, m2); diff != "" {
			t.Fatalf("round trip changed the message: %s\nfirst:  %s\nsecond: %s", diff, data, b)
		}
		b2, err := AppendMessage(nil, m2)
		if err != nil || !bytes.Equal(b, b2) {
			t.Fatalf("encoding is not stable:\n%s\n%s (%v)", b, b2, err)
		}
	})
}

func compareMessages(a, b *Message) string {
	switch {
	case a.ID != b.ID:
		return "id " + a.ID.String() + " != " + b.ID.String()
	case a.Method != b.Method:
		return "method"
	case !bytes.Equal(a.Params, b.Params) || (a.Params == nil) != (b.Params == nil):
		return "params"
	case !bytes.Equal(a.Result, b.Result) || (a.Result == nil) != (b.Result == nil):
		return "result"
	case (a.Error == nil) != (b.Error == nil):
		return "error presence"
	case a.Error != nil && (a.Error.Code != b.Error.Code || a.Error.Message != b.Error.Message || !bytes.Equal(a.Error.Data, b.Error.Data)):
		return "error"
	case !bytes.Equal(a.meta.Raw, b.meta.Raw) || !bytes.Equal(a.meta.ProgressToken, b.meta.ProgressToken) || a.meta.ProtocolVersion != b.meta.ProtocolVersion:
		return "meta"
	}
	return ""
}

// hasDuplicateNames reports whether valid JSON has an object with two
// members of the same name, as encoding/json decodes names (invalid
// surrogates read as U+FFFD).
func hasDuplicateNames(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number too large for float64 is not an error
	type frame struct {
		object  bool
		names   map[string]bool
		wantKey bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{', '[':
				if top != nil && top.object {
					top.wantKey = true
				}
				stack = append(stack, &frame{object: tok == '{', names: map[string]bool{}, wantKey: true})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.object && top.wantKey {
				if top.names[tok] {
					return true
				}
				top.names[tok] = true
				top.wantKey = false
				continue
			}
		}
		if top != nil && top.object {
			top.wantKey = true
		}
	}
}

// depth returns the deepest nesting of arrays and objects in data, which
// must be valid JSON.
func depth(data []byte) int {
	d, peak, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			peak = max(peak, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return peak
}

// FuzzValid checks the scanner against encoding/json: it accepts nothing
// encoding/json rejects, and rejects what encoding/json accepts only for
// its documented strictness: invalid UTF-8 in strings, duplicate member
// names, nesting deeper than the limit.
func FuzzValid(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s, uint8(8))
	}
	f.Add([]byte(`{"a":{"b":[[[[[[[[[1]]]]]]]]]}}`), uint8(10))
	f.Fuzz(func(t *testing.T, data []byte, maxDepth uint8) {
		limit := int(maxDepth)
		err := valid(data, limit)
		std := json.Valid(data)
		if err == nil {
			if !std {
				t.Fatalf("Valid accepts what encoding/json rejects")
			}
			if !utf8.Valid(data) {
				t.Fatalf("Valid accepts invalid UTF-8")
			}
			if depth(data) > limit {
				t.Fatalf("Valid accepts depth %d over %d", depth(data), limit)
			}
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeParseError {
			t.Fatalf("error %T %v is not a parse error", err, err)
		}
		if !std {
			return
		}
		switch msg := e.Message; {
		case strings.Contains(msg, "invalid UTF-8"):
			if utf8.Valid(data) {
				t.Fatalf("%v, but the input is valid UTF-8", err)
			}
		case strings.Contains(msg, "duplicate member name"):
			if !hasDuplicateNames(data) {
				t.Fatalf("%v, but encoding/json sees no duplicate", err)
			}
		case strings.Contains(msg, "nested deeper"):
			if depth(data) <= limit {
				t.Fatalf("%v, but the depth is %d", err, depth(data))
			}
		default:
			t.Fatalf("Valid rejects what encoding/json accepts: %v", err)
		}
	})
}

// FuzzConnDispatch feeds arbitrary lines to a Conn. It must never panic or
// hang, and must answer every request it reads exactly once (an invalid
// message with a readable id counts as a request, as ReplyToInvalid is
// set), and nothing else.
func FuzzConnDispatch(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}
{"jsonrpc":"2.0","id":1,"method":"b"}
{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}
{"jsonrpc":"2.0","id":"1","method":"panic"}
{"jsonrpc":"2.0","id":2,"method":"sleep","params":[1]}
{"jsonrpc":"2.0","id":3,"method":"sleep"}
{"jsonrpc":"2.0","id":4,"result":{}}
{"jsonrpc":"2.0","id":5,"method":5}
garbage
`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		lines := bytes.Split(data, []byte("\n"))
		// What the Conn must answer: one response per request, by id.
		want := map[string]int{}
		mayDrop := map[string]bool{} // ids a cancellation may leave unanswered
		for _, line := range lines {
			m, err := Decode(line, Limits{})
			var de *DecodeError
			switch {
			case errors.As(err, &de):
				want[de.ID.String()]++
			case err != nil:
				t.Fatalf("Decode: %v", err)
			case m.IsRequest():
				want[m.ID.String()]++
			case m.Method == "notifications/cancelled":
				var p cancelledParams
				if json.Unmarshal(m.Params, &p) == nil {
					mayDrop[p.RequestID.String()] = true
				}
			}
		}
		synctest.Test(t, func(t *testing.T) {
			s, peer := newRawPeer(t)
			c := newConn(context.Background(), s, &ConnOptions{
				MaxInFlight:    2,
				ReplyToInvalid: true,
				DrainTimeout:   time.Hour,
				Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
					switch m.Method {
					case "panic":
						panic("fuzz")
					case "sleep":
						time.Sleep(time.Second)
					}
					return m.Params, nil
				}),
			})
			for _, line := range lines {
				peer.send(string(line))
			}
			peer.closeWrite()
			c.Wait()
			got := map[string]int{}
			for {
				line, err := peer.in.pop(peer.stop)
				if err == io.EOF {
					break
				}
				r, err := Decode(line, Limits{})
				if err != nil {
					t.Fatalf("the Conn wrote an invalid message %s: %v", line, err)
				}
				if !r.IsResponse() {
					t.Fatalf("the Conn wrote a %s", line)
				}
				got[r.ID.String()]++
			}
			for id, n := range want {
				if got[id] != n && !(mayDrop[id] && got[id] < n) {
					t.Errorf("id %s: %d responses, want %d", id, got[id], n)
				}
			}
			for id, n := range got {
				if want[id] == 0 {
					t.Errorf("id %s: %d responses to no request", id, n)
				}
			}
		})
	})
}
