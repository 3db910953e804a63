package streamable_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/ssehandler"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

func connectHTTP(tb testing.TB, url string, opts *client.Options, tr *streamable.Transport) *client.Client {
	tb.Helper()
	if tr == nil {
		tr = &streamable.Transport{}
	}
	tr.URL = url
	c, err := client.Connect(context.Background(), tr, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

func TestClientEras(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		stateless     bool
	}{
		{"detect", "", true},
		{"stateless", protocol.Version20260728, true},
		{"legacy", protocol.Version20251125, false},
		{"legacy-2025-03-26", protocol.Version20250326, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			ts, _ := newHTTPServer(t, nil)
			var progress atomic.Int32
			c := connectHTTP(t, ts.URL, &client.Options{
				ProtocolVersion: tc.version,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
				},
			}, nil)
			if c.Stateless() != tc.stateless {
				t.Fatalf("stateless = %v", c.Stateless())
			}
			ctx := context.Background()
			res, err := c.Call(ctx, "echo", map[string]string{"message": "héllo"})
			if err != nil || res.Content[0].Text != "héllo" {
				t.Fatalf("echo: %v %v", res, err)
			}
			pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { progress.Add(1) })
			res, err = c.Call(pctx, "progress", map[string]int{"steps": 3, "delayMs": 1})
			if err != nil || res.Content[0].Text != "done" || progress.Load() != 3 {
				t.Fatalf("progress: %v %v, %d notifications", res, err, progress.Load())
			}
			if tc.version != protocol.Version20250326 {
				res, err = c.Call(ctx, "ask", nil)
				if err != nil || res.Content[0].Text != "Ann" {
					t.Fatalf("elicitation: %+v %v", res, err)
				}
			}
			// x-mcp-header: the client learns from tools/list which
			// arguments to mirror, and the server checks them.
			if _, err := client.Collect(c.Tools(ctx)); err != nil {
				t.Fatal(err)
			}
			res, err = c.Call(ctx, "region", map[string]any{"region": "Zürich", "n": 7})
			if err != nil || res.IsError || res.Content[0].Text != "Zürich" {
				t.Fatalf("region: %+v %v", res, err)
			}
		})
	}
}

// A legacy session the server forgot (here: expired) is opened again by
// the client on its own, and the call that met the 404 goes through.
func TestClientReinitializes(t *testing.T) {
	leakcheck.Check(t)
	ts, h := newHTTPServer(t, &streamablehandler.Options{SessionIdleTimeout: 50 * time.Millisecond})
	c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, &streamable.Transport{DisableGETStream: true})
	for deadline := time.Now().Add(5 * time.Second); h.Sessions() != 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if h.Sessions() != 0 {
		t.Fatal("the session did not expire")
	}
	res, err := c.Call(context.Background(), "echo", map[string]string{"message": "again"})
	if err != nil || res.Content[0].Text != "again" {
		t.Fatalf("after the session ended: %v %v", res, err)
	}
	if h.Sessions() != 1 {
		t.Errorf("%d sessions, want the new one", h.Sessions())
	}
}

// A server that ends the stream of a request before its response: the
// client resumes with GET and Last-Event-ID after the announced delay.
func TestClientResumesClosedStream(t *testing.T) {
	leakcheck.Check(t)
	s := testServer()
	server.AddTool(s, &protocol.Tool{Name: "reconnect"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Progress(ctx, 1, 2, "before")
		if !req.CloseStream() {
			return "", errors.New("the transport cannot close the stream")
		}
		time.Sleep(50 * time.Millisecond)
		req.Progress(ctx, 2, 2, "after")
		return "resumed", nil
	})
	h := streamablehandler.New(s, &streamablehandler.Options{Retry: 20 * time.Millisecond})
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer h.Close()
	var progress atomic.Int32
	c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, &streamable.Transport{DisableGETStream: true})
	ctx := client.WithProgress(context.Background(), func(*protocol.ProgressParams) { progress.Add(1) })
	res, err := c.Call(ctx, "reconnect", nil)
	if err != nil || res.IsError || res.Content[0].Text != "resumed" {
		t.Fatalf("%+v %v", res, err)
	}
	if gets.Load() != 1 || progress.Load() != 2 {
		t.Errorf("%d resuming GETs, %d progress notifications; want 1 and 2", gets.Load(), progress.Load())
	}
}

// An HTTP+SSE (2024-11-05) server at the URL: initialize over Streamable
// HTTP is refused without a stateless error body, and the client falls back.
func TestClientFallsBackToSSE(t *testing.T) {
	leakcheck.Check(t)
	h := ssehandler.New(testServer(), &ssehandler.Options{SSEPath: "/mcp", MessagePath: "/message"})
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()
	c := connectHTTP(t, ts.URL+"/mcp", nil, nil)
	if c.Stateless() {
		t.Fatal("stateless over HTTP+SSE")
	}
	res, err := c.Call(context.Background(), "echo", map[string]string{"message": "old"})
	if err != nil || res.Content[0].Text != "old" {
		t.Fatalf("%v %v", res, err)
	}
}

func TestClientHTTPErrors(t *testing.T) {
	leakcheck.Check(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer ts.Close()
	_, err := client.Connect(context.Background(), &streamable.Transport{URL: ts.URL}, &client.Options{ProbeTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("Connect to a 404: %v", err)
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == protocol.CodeUnsupportedProtocolVersion {
		t.Errorf("a plain 404 taken for a stateless error: %v", err)
	}
}

// TestClientWaitsForGETStream checks that a legacy Connect returns only
// once the GET stream is established, so that a server that sends its
// first request on that stream right away (as the TypeScript SDK's
// server does with requests unrelated to a POST) does not find it
// missing.
func TestClientWaitsForGETStream(t *testing.T) {
	leakcheck.Check(t)
	h := streamablehandler.New(testServer(), nil)
	var getServed atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			time.Sleep(200 * time.Millisecond)
			getServed.Store(true)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, nil)
	if !getServed.Load() {
		t.Fatal("Connect returned before the GET stream was established")
	}
}
