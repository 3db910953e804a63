package streamable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

type echoIn struct {
	Message string `json:"message"`
}

// testServer is a small server for the transport tests.
func testServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "http-test", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "progress"}, func(ctx context.Context, req *server.Request, in struct {
		Steps int `json:"steps"`
		Delay int `json:"delayMs"`
	}) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			req.Progress(ctx, float64(i), float64(in.Steps), "")
			select {
			case <-ctx.Done():
				return "", context.Cause(ctx)
			case <-time.After(time.Duration(in.Delay) * time.Millisecond):
			}
		}
		return "done", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		<-ctx.Done()
		select {
		case blockCancelled <- struct{}{}:
		default: // nobody counts (FuzzHandler cancels many)
		}
		return "", context.Cause(ctx)
	})
	server.AddTool(s, &protocol.Tool{Name: "ask"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Content["name"]), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "region", InputSchema: []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`)},
		func(ctx context.Context, req *server.Request, in struct {
			Region string `json:"region"`
			N      int    `json:"n"`
		}) (string, error) {
			return in.Region, nil
		})
	return s
}

var blockCancelled = make(chan struct{}, 4)

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// post sends a raw POST and returns the response, whose body the caller
// closes.
func post(t *testing.T, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func statelessHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func newHTTPServer(t *testing.T, opts *streamablehandler.Options) (*httptest.Server, *streamablehandler.Handler) {
	t.Helper()
	return serveHTTP(t, testServer(), opts)
}

// serveHTTP serves s over Streamable HTTP on loopback until the test or
// benchmark ends.
func serveHTTP(tb testing.TB, s *server.Server, opts *streamablehandler.Options) (*httptest.Server, *streamablehandler.Handler) {
	tb.Helper()
	h := streamablehandler.New(s, opts)
	ts := httptest.NewServer(h)
	tb.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts, h
}

func TestStatelessHTTP(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	callEcho := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + statelessMeta + `,"name":"echo","arguments":{"message":"hi"}}}`
	tests := []struct {
		name       string
		body       string
		headers    map[string]string
		status     int
		want       string
		wantHeader map[string]string
	}{
		{"call as JSON", callEcho, statelessHeaders("tools/call", "echo"), 200, `"text":"hi"`, map[string]string{"Content-Type": "application/json"}},
		{"discover", `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{` + statelessMeta + `}}`, statelessHeaders("server/discover", ""), 200, `"supportedVersions"`, nil},
		{"missing version header", callEcho, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "echo"}, 400, `-32020`, nil},
		{"version header disagrees", callEcho, map[string]string{"MCP-Protocol-Version": "2026-08-01", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}, 400, `-32020`, nil},
		{"method header disagrees", callEcho, statelessHeaders("tools/list", "echo"), 400, `-32020`, nil},
		{"missing name header", callEcho, statelessHeaders("tools/call", ""), 400, `-32020`, nil},
		{"name header disagrees", callEcho, statelessHeaders("tools/call", "other"), 400, `Mcp-Name header value`, nil},
		{"name header in base64", callEcho, statelessHeaders("tools/call", "=?base64?ZWNobw==?="), 200, `"text":"hi"`, nil},
		{"unknown method", `{"jsonrpc":"2.0","id":3,"method":"nope/nope","params":{` + statelessMeta + `}}`, statelessHeaders("nope/nope", ""), 404, `-32601`, nil},
		{"removed method", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{` + statelessMeta + `}}`, statelessHeaders("ping", ""), 404, `-32601`, nil},
		{"unsupported version", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, 400, `-32022`, nil},
		{"param header matches", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{` + statelessMeta + `,"name":"region","arguments":{"region":"eu-west","n":42}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "region", "Mcp-Param-Region": "eu-west", "Mcp-Param-N": "42.0"}, 200, `"text":"eu-west"`, nil},
		{"param header missing", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + statelessMeta + `,"name":"region","arguments":{"region":"eu-west"}}}`,
			statelessHeaders("tools/call", "region"), 400, `Mcp-Param-Region`, nil},
		{"param header disagrees", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{` + statelessMeta + `,"name":"region","arguments":{"region":"eu-west"}}}`,
			map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "region", "Mcp-Param-Region": "us-east"}, 400, `-32020`, nil},
		{"malformed JSON", `{"jsonrpc":`, statelessHeaders("tools/call", "echo"), 400, `-32700`, nil},
		{"duplicate keys", `{"jsonrpc":"2.0","id":9,"id":9,"method":"tools/list"}`, statelessHeaders("tools/list", ""), 400, `duplicate`, nil},
		{"wrong content type", callEcho, map[string]string{"Content-Type": "text/plain"}, 415, `Content-Type`, nil},
		{"not acceptable", callEcho, map[string]string{"Accept": "text/html"}, 406, `Accept`, nil},
		{"forged origin", callEcho, map[string]string{"Origin": "http://evil.example"}, 403, `Origin`, nil},
		{"forged host", callEcho, map[string]string{"Host": "evil.example"}, 403, `Host`, nil},
		{"local origin", callEcho, merge(statelessHeaders("tools/call", "echo"), map[string]string{"Origin": "http://localhost:1234"}), 200, `"text":"hi"`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.headers {
				if k == "Host" {
					req.Host = v
				} else {
					req.Header.Set(k, v)
				}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %s, want %d with %s", resp.StatusCode, body, tc.status, tc.want)
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(method, ts.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s without a session: %d, want 405", method, resp.StatusCode)
		}
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestStatelessBodyLimit(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, &streamablehandler.Options{MaxBodyBytes: 1024})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + statelessMeta + `,"name":"echo","arguments":{"message":"` + strings.Repeat("x", 2000) + `"}}}`
	resp := post(t, ts.URL, big, statelessHeaders("tools/call", "echo"))
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "exceeds") {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
}

// A stateless request with progress is answered as an event stream:
// notifications first, then the response.
func TestStatelessProgressStream(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"progress","arguments":{"steps":3,"delayMs":1}}}`
	resp := post(t, ts.URL, body, statelessHeaders("tools/call", "progress"))
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("content type %q, X-Accel-Buffering %q", ct, resp.Header.Get("X-Accel-Buffering"))
	}
	events := readAll(t, resp)
	if n := strings.Count(events, `notifications/progress`); n != 3 {
		t.Errorf("%d progress events in\n%s", n, events)
	}
	if !strings.Contains(events, `"text":"done"`) || strings.Index(events, `"text":"done"`) < strings.LastIndex(events, "notifications/progress") {
		t.Errorf("response missing or not last:\n%s", events)
	}
}

// Closing a stateless response stream cancels its request.
func TestStatelessDisconnectCancels(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + statelessMeta + `,"name":"block"}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range statelessHeaders("tools/call", "block") {
		req.Header.Set(k, v)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-blockCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was not cancelled when the client went away")
	}
	<-done
}

// legacySession opens a legacy session and returns its id.
func legacySession(t *testing.T, url string, caps string) string {
	t.Helper()
	resp := post(t, url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"t","version":"1"}}}`, nil)
	body := readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
	}
	resp = post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return sid
}

func TestLegacyHTTP(t *testing.T) {
	leakcheck.Check(t)
	ts, h := newHTTPServer(t, nil)
	sid := legacySession(t, ts.URL, `{}`)
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}

	resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, hdr)
	if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"text":"hi"`) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("call: %d %s", resp.StatusCode, body)
	}
	// With progress the answer is an event stream, primed with an event id.
	resp = post(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"progressToken":7},"name":"progress","arguments":{"steps":2,"delayMs":1}}}`, hdr)
	events := readAll(t, resp)
	if !strings.HasPrefix(events, "id: ") || !strings.Contains(events, "retry: ") || strings.Count(events, "notifications/progress") != 2 || !strings.Contains(events, `"text":"done"`) {
		t.Errorf("progress stream:\n%s", events)
	}
	// Unknown session, bad version header, missing session.
	for _, tc := range []struct {
		headers map[string]string
		status  int
	}{
		{map[string]string{"Mcp-Session-Id": "nope"}, 404},
		{map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"}, 400},
		{nil, 400},
	} {
		resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, tc.headers)
		if readAll(t, resp); resp.StatusCode != tc.status {
			t.Errorf("%v: %d, want %d", tc.headers, resp.StatusCode, tc.status)
		}
	}
	// DELETE ends the session.
	req, _ := http.NewRequest(http.MethodDelete, ts.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	resp = post(t, ts.URL, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, hdr)
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound || h.Sessions() != 0 {
		t.Errorf("after DELETE: %d, %d sessions", resp.StatusCode, h.Sessions())
	}
}

// A legacy tool that elicits: the request goes out on the POST's event
// stream, the client answers with a POST of its own.
func TestLegacyServerToClientRequest(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	sid := legacySession(t, ts.URL, `{"elicitation":{}}`)
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"ask"}}`, hdr)
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	var elicit string
	for elicit == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		if strings.Contains(line, "elicitation/create") {
			elicit = line
		}
	}
	// The server numbers its own requests from 1.
	answer := post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Ann"}}}`, hdr)
	if readAll(t, answer); answer.StatusCode != http.StatusAccepted {
		t.Fatalf("answer: %d", answer.StatusCode)
	}
	rest, _ := io.ReadAll(rd)
	if !strings.Contains(string(rest), `"text":"Ann"`) {
		t.Errorf("final answer missing:\n%s", rest)
	}
}

// A client that loses the connection during a legacy stream resumes it
// with Last-Event-ID and gets the rest, response included.
func TestLegacyResume(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	sid := legacySession(t, ts.URL, `{}`)
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"progress","arguments":{"steps":5,"delayMs":40}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(resp.Body)
	lastID := ""
	for progress := 0; progress < 2; {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "id: ") {
			lastID = strings.TrimSpace(strings.TrimPrefix(line, "id: "))
		}
		if strings.Contains(line, "notifications/progress") {
			progress++
		}
	}
	cancel() // the connection breaks
	resp.Body.Close()

	greq, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", sid)
	greq.Header.Set("Last-Event-ID", lastID)
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	rest := readAll(t, gresp)
	if n := strings.Count(rest, "notifications/progress"); n != 3 || !strings.Contains(rest, `"text":"done"`) {
		t.Errorf("resumed stream (after %s) has %d progress events:\n%s", lastID, n, rest)
	}
}

func TestLegacySessionExpires(t *testing.T) {
	leakcheck.Check(t)
	ts, h := newHTTPServer(t, &streamablehandler.Options{SessionIdleTimeout: 50 * time.Millisecond})
	sid := legacySession(t, ts.URL, `{}`)
	deadline := time.Now().Add(5 * time.Second)
	for h.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	resp := post(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": sid})
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("expired session: %d, want 404", resp.StatusCode)
	}
}
