package wire

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCheckAnswer(t *testing.T) {
	want := []byte("w00s0000000001-abc")
	cases := []struct {
		name, msg string
		ok        bool
		mismatch  bool
	}{
		{"plain", `{"jsonrpc":"2.0","id":65,"result":{"content":[{"type":"text","text":"w00s0000000001-abc"}]}}`, true, false},
		{"id last, spaces, meta", `{ "jsonrpc" : "2.0", "result" : { "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","id":"y"}}, "content" : [ { "text" : "w00s0000000001-abc", "type":"text" } ], "isError":false, "resultType":"complete" }, "id" : 65 }`, true, false},
		{"escaped text", `{"id":65,"result":{"content":[{"type":"text","text":"w00s0000000001\u002dabc"}]}}`, true, false},
		{"escaped quote before", `{"id":65,"result":{"x":"a\\\"b","content":[{"type":"text","text":"w00s0000000001-abc"}]}}`, true, false},
		{"stale text", `{"id":65,"result":{"content":[{"type":"text","text":"w00s0000000000-abc"}]}}`, false, true},
		{"text only nested deeper", `{"id":65,"result":{"content":[{"type":"resource","resource":{"text":"w00s0000000001-abc"}}]}}`, false, false},
		{"isError", `{"id":65,"result":{"isError":true,"content":[{"type":"text","text":"w00s0000000001-abc"}]}}`, false, false},
		{"JSON-RPC error", `{"id":65,"error":{"code":-32602,"message":"no"}}`, false, false},
		{"no content", `{"id":65,"result":{"content":[]}}`, false, false},
		{"truncated", `{"id":65,"result":{"content":[{"type":"text","text":"w00s00000`, false, false},
		{"not an object", `[1,2]`, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckAnswer([]byte(c.msg), want)
			if (err == nil) != c.ok {
				t.Fatalf("CheckAnswer = %v, want ok=%v", err, c.ok)
			}
			if errors.Is(err, ErrMismatch) != c.mismatch {
				t.Errorf("mismatch = %v, want %v (%v)", errors.Is(err, ErrMismatch), c.mismatch, err)
			}
			// The independent decoder agrees wherever the answer is well formed.
			full := FullCheck([]byte(c.msg), 65, want)
			if c.name != "truncated" && c.name != "not an object" && (full == nil) != c.ok {
				t.Errorf("FullCheck = %v, scanner ok=%v", full, c.ok)
			}
		})
	}
}

func TestMessageID(t *testing.T) {
	for msg, want := range map[string]int64{
		`{"jsonrpc":"2.0","id":1234,"result":{}}`:             1234,
		`{"result":{"id":7,"text":"\"id\":9"},"id":42}`:       42,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`: -1,
		`{"id":"abc","result":{}}`:                            -1,
	} {
		got, ok := MessageID([]byte(msg))
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("MessageID(%s) = %d, want %d", msg, got, want)
		}
	}
}

func TestReadResponse(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":65,"result":{"content":[{"type":"text","text":"hi"}]}}`
	cases := []struct {
		name, raw   string
		status      int
		sse, closed bool
		body        string
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nMcp-Session-Id: s1\r\n\r\nhello", 200, false, false, "hello"},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2;x=y\r\nlo\r\n0\r\n\r\n", 200, false, false, "hello"},
		{"accepted", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", 202, false, false, ""},
		{"to the end", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc", 200, false, true, "abc"},
		{"sse", "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n" +
			"10\r\nevent: message\r\n\r\n" + chunk("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n") +
			chunk("id: 1\ndata: "+answer+"\n\n") + "0\r\n\r\n", 200, true, false, answer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf []byte
			a, closed, err := readResponse(bufio.NewReader(strings.NewReader(c.raw)), &buf)
			if err != nil {
				t.Fatal(err)
			}
			body := string(a.body)
			if a.sse {
				b, err := sseMessage(a.body, 65, new([]byte))
				if err != nil {
					t.Fatal(err)
				}
				body = string(b)
			}
			if a.status != c.status || a.sse != c.sse || closed != c.closed || body != c.body {
				t.Errorf("got status %d sse %v closed %v body %q", a.status, a.sse, closed, body)
			}
		})
	}
}

// chunk frames s as one chunk of a chunked body.
func chunk(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
