package interop

// ferry's Streamable HTTP client (transport/streamable) against
// @modelcontextprotocol/server-everything over HTTP:
//
//   - in "streamableHttp" mode (express, the TypeScript SDK's
//     StreamableHTTPServerTransport, endpoint /mcp, PORT from the
//     environment): era detection over HTTP, then every tool, resource,
//     template and prompt, completion, logging and a resource
//     subscription, as everything_test.go does over stdio, and the DELETE
//     that ends the session at Close;
//   - in "sse" mode (the 2024-11-05 HTTP+SSE transport only): the
//     Streamable HTTP transport pointed at its /sse URL falls back to
//     HTTP+SSE by itself, then does the same exercise.
//
// A recording http.RoundTripper under the client shows what went over the
// wire.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// fellBackMsg is what streamable.Transport logs when it switches to
// HTTP+SSE.
const fellBackMsg = "streamable: the server speaks the HTTP+SSE transport of 2024-11-05; using it"

func TestHTTPServerEverything(t *testing.T) {
	requireNode(t)
	for _, tc := range []struct {
		name    string
		version string // empty: detect
	}{
		{"detect", ""},
		{"pinned-2025-11-25", protocol.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			base, out := startEverythingHTTP(t, ctx, "streamableHttp")
			endpoint := base + "/mcp"
			// The client's goroutines and its HTTP connections' must be
			// gone once it is closed.
			leakcheck.Check(t)
			wire := &wireLog{}
			ht := &http.Transport{}
			hc := &http.Client{Transport: wire.wrap(ht)}
			defer ht.CloseIdleConnections()
			tlog := &slogRecorder{}

			x := newEverything()
			var err error
			x.c, err = client.Connect(ctx, &streamable.Transport{URL: endpoint, Client: hc, Logger: slog.New(tlog)}, x.clientOptions(tc.version))
			if err != nil {
				t.Fatalf("connect: %v\nwire: %s\nserver output:\n%s", err, wire, out)
			}
			t.Cleanup(func() { x.c.Close() })

			if x.c.Stateless() || x.c.ProtocolVersion() != protocol.Version20251125 {
				t.Fatalf("era: stateless=%v version=%q, want legacy 2025-11-25", x.c.Stateless(), x.c.ProtocolVersion())
			}
			if got := x.c.ServerInfo().Name; got != "mcp-servers/everything" {
				t.Errorf("server name %q", got)
			}
			// The session opened by initialize.
			inits := wire.find(func(e wireEntry) bool { return e.RPC == protocol.MethodInitialize })
			if len(inits) != 1 || inits[0].Status != http.StatusOK || inits[0].RespSession == "" || inits[0].Session != "" {
				t.Fatalf("want one initialize POST answered 200 with an Mcp-Session-Id; got %v", inits)
			}
			sid := inits[0].RespSession

			if tc.version == "" {
				checkHTTPProbe(t, x, wire)
			} else {
				if n := x.logs.count("server/discover failed"); n != 0 {
					t.Errorf("a pinned version must not probe; got %d fallback records", n)
				}
				if first := wire.all()[0]; first.RPC != protocol.MethodInitialize {
					t.Errorf("a pinned legacy version must start with initialize; the first request was %s", first)
				}
			}

			x.exercise(ctx, t)

			// After initialize, every request names the session and the
			// negotiated revision; the server-initiated messages
			// (simulated logging, resource updates) came on the GET
			// stream, which the server accepted.
			for _, e := range wire.all() {
				if e.RPC == protocol.MethodInitialize || e.RPC == protocol.MethodDiscover {
					continue
				}
				if e.Session != sid || e.Version != protocol.Version20251125 {
					t.Errorf("request after initialize without the session or version: %s", e)
				}
			}
			gets := wire.find(func(e wireEntry) bool { return e.Method == http.MethodGet })
			if len(gets) == 0 || gets[0].Status != http.StatusOK {
				t.Errorf("no GET stream accepted by the server: %v", gets)
			}
			if n := tlog.count(fellBackMsg); n != 0 {
				t.Errorf("fell back to HTTP+SSE against a Streamable HTTP server")
			}

			// Close ends the session with DELETE ("Clients that no longer
			// need a particular session ... SHOULD send an HTTP DELETE").
			if err := x.c.Close(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Close: %v", err)
			}
			dels := wire.find(func(e wireEntry) bool { return e.Method == http.MethodDelete })
			if len(dels) != 1 || dels[0].Session != sid || dels[0].Status != http.StatusOK {
				t.Errorf("want one DELETE of session %s answered 200, got %v", sid, dels)
			}
			// The server says so, and forgot the session.
			waitOutput(t, out, 5*time.Second, "Received session termination request for session "+sid)
			waitOutput(t, out, 5*time.Second, "Transport closed for session "+sid+", removing from transports map")
			status, body := postRaw(t, ctx, endpoint, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			// The specification asks for 404 on a terminated session;
			// server-everything's express wrapper answers 400 for any
			// session id it does not know, before the SDK transport
			// (which would answer 404) sees the request.
			if status != http.StatusBadRequest || !strings.Contains(body, "No valid session ID provided") {
				t.Errorf("a request in the deleted session: %d %s, want server-everything's 400 \"No valid session ID provided\"", status, body)
			}
			t.Logf("session %s: %d HTTP requests (%d GET), ended by DELETE", sid, len(wire.all()), len(gets))
		})
	}
}

// checkHTTPProbe shows the detection over HTTP: the server/discover probe
// went out as a stateless request (MCP-Protocol-Version 2026-07-28, no
// session) and was refused with 400 and a JSON-RPC error that is not a
// stateless one, so the client went on with initialize.
func checkHTTPProbe(t *testing.T, x *everything, wire *wireLog) {
	t.Helper()
	all := wire.all()
	if len(all) < 2 {
		t.Fatalf("wire: %s", wire)
	}
	probe, init := all[0], all[1]
	if probe.Method != http.MethodPost || probe.RPC != protocol.MethodDiscover || probe.Version != protocol.Version20260728 || probe.Session != "" || probe.Status != http.StatusBadRequest {
		t.Errorf("first request %s, want POST server/discover with MCP-Protocol-Version %s answered 400", probe, protocol.Version20260728)
	}
	if init.RPC != protocol.MethodInitialize {
		t.Errorf("second request %s, want initialize", init)
	}
	recs := x.logs.find("server/discover failed")
	if len(recs) != 1 {
		t.Fatalf("want one record of the probe falling back to initialize, got %d: %v", len(recs), x.logs.all())
	}
	var rpcErr *jsonrpc.Error
	err, _ := recs[0]["error"].(error)
	if !errors.As(err, &rpcErr) {
		t.Fatalf("the probe failed with %v (%T), want the server's JSON-RPC error", recs[0]["error"], recs[0]["error"])
	}
	// The TypeScript SDK's transport refuses any request before
	// initialize this way.
	if rpcErr.Code != -32000 || rpcErr.Message != "Bad Request: Server not initialized" {
		t.Errorf("probe error %d %q, want -32000 \"Bad Request: Server not initialized\"", rpcErr.Code, rpcErr.Message)
	}
	t.Logf("probe: server/discover answered HTTP %d, %d %q; fell back to initialize, got %s", probe.Status, rpcErr.Code, rpcErr.Message, x.c.ProtocolVersion())
}

// TestHTTPFallbackToSSEServerEverything points streamable.Transport at
// the /sse URL of server-everything in "sse" mode, which speaks only the
// HTTP+SSE transport of 2024-11-05: the POSTs of Streamable HTTP get 404,
// and the transport falls back to HTTP+SSE on the same URL.
func TestHTTPFallbackToSSEServerEverything(t *testing.T) {
	requireNode(t)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	base, out := startEverythingHTTP(t, ctx, "sse")
	leakcheck.Check(t)
	wire := &wireLog{}
	ht := &http.Transport{}
	hc := &http.Client{Transport: wire.wrap(ht)}
	defer ht.CloseIdleConnections()
	tlog := &slogRecorder{}

	x := newEverything()
	var err error
	x.c, err = client.Connect(ctx, &streamable.Transport{URL: base + "/sse", Client: hc, Logger: slog.New(tlog)}, x.clientOptions(""))
	if err != nil {
		t.Fatalf("connect: %v\nwire: %s\nserver output:\n%s", err, wire, out)
	}
	t.Cleanup(func() { x.c.Close() })

	if n := tlog.count(fellBackMsg); n != 1 {
		t.Errorf("want one record of the fallback to HTTP+SSE, got %d: %v", n, tlog.all())
	}
	if x.c.Stateless() || x.c.ProtocolVersion() != protocol.Version20251125 {
		t.Fatalf("era: stateless=%v version=%q, want legacy 2025-11-25", x.c.Stateless(), x.c.ProtocolVersion())
	}
	if got := x.c.ServerInfo().Name; got != "mcp-servers/everything" {
		t.Errorf("server name %q", got)
	}
	// On the wire: the probe and initialize POSTed to /sse, both refused
	// by express with 404; then the GET of HTTP+SSE, whose endpoint event
	// names /message?sessionId=..., where initialize went again.
	all := wire.all()
	if len(all) < 4 {
		t.Fatalf("wire: %s", wire)
	}
	want := []string{"POST /sse server/discover 404", "POST /sse initialize 404", "GET /sse  200", "POST /message initialize 202"}
	var got []string
	for _, e := range all[:4] {
		got = append(got, fmt.Sprintf("%s %s %s %d", e.Method, e.Path, e.RPC, e.Status))
	}
	if !slices.Equal(got, want) {
		t.Errorf("first requests:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sid := all[3].Query.Get("sessionId")
	if sid == "" {
		t.Fatalf("the HTTP+SSE POST names no sessionId: %s", all[3])
	}
	recs := x.logs.find("server/discover failed")
	if len(recs) != 1 {
		t.Fatalf("want one record of the probe falling back to initialize, got %d: %v", len(recs), x.logs.all())
	}
	if err, _ := recs[0]["error"].(error); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("the probe failed with %v, want the 404", recs[0]["error"])
	}

	x.exercise(ctx, t)

	// Every message after the fallback went to the endpoint, in the
	// session, and only the one GET was made.
	all = wire.all()
	for _, e := range all[3:] {
		if e.Method != http.MethodPost || e.Path != "/message" || e.Query.Get("sessionId") != sid || e.Status != http.StatusAccepted {
			t.Errorf("message not posted to the HTTP+SSE endpoint: %s", e)
		}
	}
	if err := x.c.Close(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Close: %v", err)
	}
	// Closing the event stream ends the session on the server.
	waitOutput(t, out, 5*time.Second, "Client Disconnected:  "+sid)
	t.Logf("fell back to HTTP+SSE: session %s, %d HTTP requests", sid, len(wire.all()))
}

// startEverythingHTTP runs server-everything in an HTTP mode
// ("streamableHttp" or "sse") on a free port and returns its base URL
// once it listens, and its output so far and to come.
func startEverythingHTTP(t *testing.T, ctx context.Context, mode string) (string, *syncBuffer) {
	t.Helper()
	entry := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	ready := map[string]string{"streamableHttp": "MCP Streamable HTTP Server listening on port", "sse": "Server is running on port"}[mode]
	port := freePort(t)
	cmd := exec.CommandContext(ctx, nodeBin, entry, mode)
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	cmd.WaitDelay = 5 * time.Second
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("server-everything %s output:\n%s", mode, out)
		}
	})
	waitOutput(t, out, 30*time.Second, fmt.Sprint(ready, " ", port))
	if t.Failed() {
		t.FailNow()
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), out
}

// waitOutput waits until out contains s.
func waitOutput(t *testing.T, out *syncBuffer, d time.Duration, s string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(out.String(), s) {
		if time.Now().After(deadline) {
			t.Errorf("no %q in the server's output within %v", s, d)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// postRaw POSTs one JSON-RPC message in a session and returns the status
// and body of the answer.
func postRaw(t *testing.T, ctx context.Context, url, sid, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", protocol.Version20251125)
	ht := &http.Transport{}
	defer ht.CloseIdleConnections()
	resp, err := (&http.Client{Transport: ht}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// wireLog records the HTTP requests that go through it: an
// http.RoundTripper for a client, or a reverse proxy's transport.
type wireLog struct {
	mu      sync.Mutex
	entries []wireEntry
}

// wireEntry is one HTTP request and the status of its answer.
type wireEntry struct {
	Method, Path string
	Query        url.Values
	RPC          string // the JSON-RPC method of a POSTed request or notification
	Version      string // MCP-Protocol-Version
	Session      string // Mcp-Session-Id of the request
	Status       int    // 0: no answer
	RespSession  string // Mcp-Session-Id of the answer
}

func (e wireEntry) String() string {
	s := fmt.Sprintf("%s %s", e.Method, e.Path)
	if e.RPC != "" {
		s += " " + e.RPC
	}
	if e.Version != "" {
		s += " version=" + e.Version
	}
	if e.Session != "" {
		s += " session=" + e.Session
	}
	s += fmt.Sprint(" -> ", e.Status)
	if e.RespSession != "" {
		s += " session=" + e.RespSession
	}
	return s
}

func (w *wireLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		e := wireEntry{
			Method:  req.Method,
			Path:    req.URL.Path,
			Query:   req.URL.Query(),
			Version: req.Header.Get("Mcp-Protocol-Version"),
			Session: req.Header.Get("Mcp-Session-Id"),
		}
		if req.Body != nil && req.Method == http.MethodPost {
			body, err := io.ReadAll(req.Body)
			req.Body.Close()
			if err != nil {
				return nil, err
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			var m struct{ Method string }
			json.Unmarshal(body, &m)
			e.RPC = m.Method
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			e.Status = resp.StatusCode
			e.RespSession = resp.Header.Get("Mcp-Session-Id")
		}
		w.mu.Lock()
		w.entries = append(w.entries, e)
		w.mu.Unlock()
		return resp, err
	})
}

func (w *wireLog) all() []wireEntry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.entries)
}

func (w *wireLog) find(f func(wireEntry) bool) []wireEntry {
	var out []wireEntry
	for _, e := range w.all() {
		if f(e) {
			out = append(out, e)
		}
	}
	return out
}

func (w *wireLog) String() string {
	var b strings.Builder
	for _, e := range w.all() {
		b.WriteString("\n\t" + e.String())
	}
	return b.String()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
