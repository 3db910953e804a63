package sse_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/ssehandler"
)

// rawSession opens an event stream by hand and returns its reader and the
// endpoint URI of its endpoint event. Cancelling ctx drops it.
func rawSession(t *testing.T, ctx context.Context, ts *httptest.Server, path string) (*ssewire.Reader, string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := ts.Client().Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("GET %s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
	}
	r := ssewire.NewReader(resp.Body, 0)
	e, err := r.Next()
	if err != nil || e.Name != "endpoint" {
		cancel()
		t.Fatalf("first event %+v %v", e, err)
	}
	return r, string(e.Data), func() { cancel(); resp.Body.Close() }
}

func post(t *testing.T, ts *httptest.Server, uri, contentType, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", ts.URL+uri, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// TestWire checks the exchange on the wire, as the 2024-11-05
// specification and the seed describe it.
func TestWire(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := serve(t, testServer(nil), nil)
	r, endpoint, drop := rawSession(t, t.Context(), ts, "/sse")
	defer drop()
	if !strings.HasPrefix(endpoint, "/message?sessionId=") || len(endpoint) < len("/message?sessionId=")+20 {
		t.Fatalf("endpoint %q", endpoint)
	}
	for _, body := range []string{initialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`} {
		if code, b := post(t, ts, endpoint, "application/json", body); code != http.StatusAccepted {
			t.Fatalf("POST: %d %s", code, b)
		}
	}
	for _, want := range []string{`"id":1,"result":{`, `"id":"t","result":{"content":[{"type":"text","text":"hi"}]`} {
		e, err := r.Next()
		if err != nil || e.Name != "message" || !strings.Contains(string(e.Data), want) {
			t.Fatalf("event %s %q %v, want %s", e.Name, e.Data, err, want)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := serve(t, testServer(nil), &ssehandler.Options{MaxBodyBytes: 1024})
	_, endpoint, drop := rawSession(t, t.Context(), ts, "/sse")
	defer drop()
	tests := []struct {
		name        string
		method, uri string
		header      map[string]string
		body        string
		code        int
		contains    string
	}{
		{"missing session id", "POST", "/message", nil, initialize, 400, "missing sessionId"},
		{"unknown session", "POST", "/message?sessionId=nope", nil, initialize, 404, "session not found"},
		{"malformed JSON", "POST", endpoint, nil, `{"jsonrpc":"2.0","id":1,`, 400, `"code":-32700`},
		{"not JSON-RPC", "POST", endpoint, nil, `{"id":2,"method":"x"}`, 400, `"id":2,"error":{"code":-32600`},
		{"batch", "POST", endpoint, nil, `[` + initialize + `]`, 400, "batches"},
		{"wrong content type", "POST", endpoint, map[string]string{"Content-Type": "text/plain"}, initialize, 415, "application/json"},
		{"body over limit", "POST", endpoint, nil, `{"jsonrpc":"2.0","method":"x","params":{"a":"` + strings.Repeat("a", 2000) + `"}}`, 413, "exceeds the limit of 1024 bytes"},
		{"forged Origin on POST", "POST", endpoint, map[string]string{"Origin": "http://evil.example"}, initialize, 403, "Origin"},
		{"forged Origin on GET", "GET", "/sse", map[string]string{"Origin": "http://evil.example"}, "", 403, "Origin"},
		{"rebound Host", "GET", "/sse", map[string]string{"Host": "evil.example"}, "", 403, "Host"},
		{"not accepting SSE", "GET", "/sse", map[string]string{"Accept": "application/json"}, "", 406, "text/event-stream"},
		{"POST on the SSE path", "POST", "/sse", nil, initialize, 405, "method not allowed"},
		{"GET on the message path", "GET", "/message", nil, "", 405, "method not allowed"},
		{"other path", "GET", "/mcp", nil, "", 404, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.URL+tt.uri, strings.NewReader(tt.body))
			if tt.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
			}
			for k, v := range tt.header {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.contains) {
				t.Errorf("%s %s: %d %s, want %d and %q", tt.method, tt.uri, resp.StatusCode, b, tt.code, tt.contains)
			}
		})
	}
	t.Run("chunked body over limit", func(t *testing.T) {
		req, _ := http.NewRequest("POST", ts.URL+endpoint, io.MultiReader(strings.NewReader(`{"a":"`), strings.NewReader(strings.Repeat("a", 4096))))
		req.ContentLength = -1
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Errorf("status %d, want 413", resp.StatusCode)
		}
	})
}

// TestDisconnect drops the event stream while a tool runs: the session
// ends and the tool's context is cancelled.
func TestDisconnect(t *testing.T) {
	leakcheck.Check(t)
	b := &blocked{started: make(chan struct{}), ended: make(chan error, 1)}
	ts, h := serve(t, testServer(b), nil)
	r, endpoint, drop := rawSession(t, t.Context(), ts, "/sse")
	post(t, ts, endpoint, "application/json", initialize)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, body := post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`); code != 202 {
		t.Fatalf("%d %s", code, body)
	}
	select {
	case <-b.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool did not start")
	}
	drop()
	select {
	case err := <-b.ended:
		t.Logf("tool cancelled: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the tool was not cancelled")
	}
	waitFor(t, "the session to end", func() bool { return h.Sessions() == 0 })
	if code, _ := post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 404 {
		t.Errorf("POST to an ended session: %d, want 404", code)
	}
}

// TestSlowClient never reads its event stream: the server disconnects it
// instead of queueing without bound.
func TestSlowClient(t *testing.T) {
	leakcheck.Check(t)
	ts, h := serve(t, testServer(nil), &ssehandler.Options{MaxQueued: 4, SendTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+"/sse", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for !strings.HasPrefix(endpoint, "data: ") {
		if endpoint, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	endpoint = strings.TrimSpace(strings.TrimPrefix(endpoint, "data: "))
	post(t, ts, endpoint, "application/json", initialize)
	post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`)
	// 64 MiB of log messages, far more than socket buffers hold.
	post(t, ts, endpoint, "application/json", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"spam","arguments":{"n":64,"bytes":1048576}}}`)
	waitFor(t, "the slow client to be disconnected", func() bool { return h.Sessions() == 0 })
}

// TestPrefix mounts the handler under a prefix: the endpoint event names
// the full path.
func TestPrefix(t *testing.T) {
	leakcheck.Check(t)
	tests := []struct {
		name     string
		opts     *ssehandler.Options
		mount    string
		sse      string
		endpoint string
	}{
		{"defaults", nil, "", "/sse", "/message?sessionId="},
		{"StripPrefix", nil, "/mcp", "/mcp/sse", "/mcp/message?sessionId="},
		{"nested paths", &ssehandler.Options{SSEPath: "/v1/events"}, "/api", "/api/v1/events", "/api/v1/message?sessionId="},
		{"one path", &ssehandler.Options{SSEPath: "/mcp", MessagePath: "/mcp"}, "", "/mcp", "/mcp?sessionId="},
		{"explicit message path", &ssehandler.Options{MessagePath: "/rpc/post"}, "/x", "/x/sse", "/x/rpc/post?sessionId="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := ssehandler.New(testServer(nil), tt.opts)
			var handler http.Handler = h
			if tt.mount != "" {
				mux := http.NewServeMux()
				mux.Handle(tt.mount+"/", http.StripPrefix(tt.mount, h))
				handler = mux
			}
			ts := httptest.NewServer(handler)
			defer ts.Close()
			defer h.Close()
			_, endpoint, drop := rawSession(t, t.Context(), ts, tt.sse)
			drop()
			if !strings.HasPrefix(endpoint, tt.endpoint) {
				t.Fatalf("endpoint %q, want %s…", endpoint, tt.endpoint)
			}
			c := connect(t, ts.URL+tt.sse, ts.Client(), clientOptions(protocol.Version20241105))
			if err := c.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
	}
}

func TestKeepAliveAndIdle(t *testing.T) {
	leakcheck.Check(t)
	ts, h := serve(t, testServer(nil), &ssehandler.Options{KeepAlive: 10 * time.Millisecond, SessionIdleTimeout: 300 * time.Millisecond})
	req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.URL+"/sse", nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	b, err := io.ReadAll(resp.Body) // until the idle session ends
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), ":\n\n"); n < 3 {
		t.Errorf("%d keep-alive comments in %v: %q", n, time.Since(start), b)
	}
	if time.Since(start) < 250*time.Millisecond {
		t.Errorf("the idle session ended after %v", time.Since(start))
	}
	waitFor(t, "the session to end", func() bool { return h.Sessions() == 0 })
}

func TestHandlerClose(t *testing.T) {
	leakcheck.Check(t)
	ts, h := serve(t, testServer(nil), &ssehandler.Options{MaxSessions: 1})
	c := connect(t, ts.URL+"/sse", ts.Client(), nil)
	// One session at most.
	resp, err := ts.Client().Get(ts.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("second session: %d, want 503", resp.StatusCode)
	}
	h.Close()
	if err := c.Ping(t.Context()); err == nil {
		t.Error("ping after the handler closed")
	}
	waitFor(t, "the session to end", func() bool { return h.Sessions() == 0 })
	resp, err = ts.Client().Get(ts.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("after Close: %d, want 503", resp.StatusCode)
	}
}
