package streamable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// fuzzInit opens a legacy session.
const fuzzInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// FuzzHandler sends the handler any request: a method, header lines and
// a body, in a session of its own or none, on a handler whose session
// table holds 8 (so that shedding runs too). The handler must never
// panic, must return once the request's client is gone (each request's
// context ends after fuzzPatience, which ends GET streams) and its
// session deleted (a legacy request outlives its client, as the spec
// wants, but not its session: that ends tools that wait), answer a status
// an HTTP client can take, keep its session table within bounds, and
// answer JSON that is JSON.
//
// Every input is complete in itself: an input that needs a session opens
// one first, so a failing input fails again when run alone.
func FuzzHandler(f *testing.F) {
	seeds := []struct {
		method, headers, body string
		session               bool
	}{
		{"POST", "", fuzzInit, false},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"progress","arguments":{"steps":2}}}`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","arguments":{}}},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}]`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"file:///x"}}`, true},
		{"POST", "MCP-Protocol-Version: 2025-11-25", `{"jsonrpc":"2.0","id":0,"result":{"action":"accept","content":{"name":"x"}}}`, true},
		{"POST", "MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, false},
		{"POST", "MCP-Protocol-Version: 2026-07-28\nMcp-Method: tools/call\nMcp-Name: region\nMcp-Param-Region: =?base64?ZXU=?=", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, false},
		{"GET", "Accept: text/event-stream\nLast-Event-Id: 1-0", "", true},
		{"GET", "Accept: text/event-stream", "", false},
		{"DELETE", "", "", true},
		{"POST", "Content-Type: text/plain\nOrigin: http://evil.example", "{", false},
		{"POST", "Origin: http://localhost\nOrigin: http://evil.example", fuzzInit, false},
		{"PUT", "", "[]", false},
	}
	for _, s := range seeds {
		f.Add(s.method, s.headers, []byte(s.body), s.session)
	}
	h := streamablehandler.New(testServer(), &streamablehandler.Options{MaxSessions: 8, KeepAlive: -1})
	f.Cleanup(func() { h.Close() })
	f.Fuzz(func(t *testing.T, method, headers string, body []byte, session bool) {
		r, err := http.NewRequest(method, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if err != nil {
			return // not a method net/http would serve
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for line := range strings.SplitSeq(headers, "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				r.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		sid := ""
		if session {
			sid = fuzzServe(t, h, mustRequest(http.MethodPost, fuzzInit), "").header.Get("Mcp-Session-Id")
			if sid == "" {
				t.Fatal("initialize opened no session")
			}
			r.Header.Set("Mcp-Session-Id", sid)
		}
		a := fuzzServe(t, h, r, sid)
		if a.status == 0 {
			a.status = http.StatusOK
		}
		if a.status < 100 || a.status > 599 {
			t.Fatalf("status %d", a.status)
		}
		if n := h.Sessions(); n > 8 {
			t.Fatalf("%d sessions, bound 8", n)
		}
		if a.header.Get("Content-Type") == "application/json" && a.size == len(a.head) && len(a.head) < 128 && !json.Valid(a.head) {
			t.Fatalf("invalid JSON answer: %q", a.head)
		}
	})
}

// fuzzPatience is how long a fuzzed request's client stays.
const fuzzPatience = 50 * time.Millisecond

// fuzzServe serves r with a context that ends after fuzzPatience, as when
// a client goes away; then it deletes session sid, if any, and fails if
// the handler has not returned a second after that.
func fuzzServe(t *testing.T, h http.Handler, r *http.Request, sid string) *answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fuzzPatience)
	defer cancel()
	a := &answer{header: http.Header{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(a, r.WithContext(ctx))
	}()
	select {
	case <-done:
		return a
	case <-time.After(fuzzPatience):
	}
	if sid != "" {
		del := mustRequest(http.MethodDelete, "")
		del.Header.Set("Mcp-Session-Id", sid)
		h.ServeHTTP(&answer{header: http.Header{}}, del)
	}
	select {
	case <-done:
		return a
	case <-time.After(time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s %s still served a second after its client left:\n%s", r.Method, r.Header, buf[:runtime.Stack(buf, true)])
		return nil
	}
}

func mustRequest(method, body string) *http.Request {
	r, err := http.NewRequest(method, "http://127.0.0.1/mcp", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	return r
}
