package websocket_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cws "github.com/coder/websocket"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/websocket"
)

func newServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ws-test", Version: "1"}, nil)
	s.AddTool(&protocol.Tool{Name: "echo", InputSchema: jsontext.Value(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var m struct {
				Message string `json:"message"`
			}
			jsonUnmarshal(args, &m)
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(m.Message)}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "ask"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(res.Content["name"].(string))}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "progress"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				req.Progress(ctx, float64(i), 3, "")
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("done")}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "block"},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	return s
}

// serve starts a Handler on a loopback listener and returns its ws:// URL.
func serve(t *testing.T, opts *websocket.Options) (string, *websocket.Handler) {
	t.Helper()
	h := websocket.NewHandler(newServer(), opts)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.Close()
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http"), h
}

func connect(t *testing.T, url string, opts *client.Options) *client.Client {
	t.Helper()
	c, err := client.Connect(context.Background(), &websocket.Transport{URL: url}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestEras(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		stateless     bool
	}{
		{"detect", "", true},
		{"stateless", protocol.Version20260728, true},
		{"legacy", protocol.Version20251125, false},
		{"legacy-2024-11-05", protocol.Version20241105, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			url, _ := serve(t, nil)
			c := connect(t, url, &client.Options{
				ProtocolVersion: tc.version,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
				},
			})
			if c.Stateless() != tc.stateless {
				t.Fatalf("stateless = %v", c.Stateless())
			}
			ctx := context.Background()
			tools, err := client.Collect(c.Tools(ctx))
			if err != nil || len(tools) != 4 {
				t.Fatalf("tools/list: %d tools, %v", len(tools), err)
			}
			res, err := c.Call(ctx, "echo", map[string]string{"message": "héllo"})
			if err != nil || res.Content[0].Text != "héllo" {
				t.Fatalf("echo: %v %v", res, err)
			}
			var progress atomic.Int32
			pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { progress.Add(1) })
			if res, err = c.Call(pctx, "progress", nil); err != nil || progress.Load() != 3 {
				t.Fatalf("progress: %v %v, %d notifications", res, err, progress.Load())
			}
			if tc.version != protocol.Version20241105 {
				if res, err = c.Call(ctx, "ask", nil); err != nil || res.Content[0].Text != "Ann" {
					t.Fatalf("elicitation: %+v %v", res, err)
				}
			}
		})
	}
}

// TestLimits: a message over the size limit gets an error answer and the
// connection goes on; one far over it ends the connection.
func TestLimits(t *testing.T) {
	leakcheck.Check(t)
	url, _ := serve(t, &websocket.Options{MaxMessageBytes: 4096})
	c := connect(t, url, nil)
	ctx := context.Background()
	_, err := c.Call(ctx, "echo", map[string]string{"message": strings.Repeat("x", 8000)})
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Fatalf("oversized call: %v", err)
	}
	if res, err := c.Call(ctx, "echo", map[string]string{"message": "still here"}); err != nil || res.Content[0].Text != "still here" {
		t.Fatalf("after the oversized call: %v %v", res, err)
	}
	_, err = c.Call(ctx, "echo", map[string]string{"message": strings.Repeat("x", 64<<10)})
	if err == nil {
		t.Fatal("a message 16 times the limit was answered")
	}
	if _, err := c.Call(ctx, "echo", map[string]string{"message": "x"}); err == nil {
		t.Fatal("the connection survived a message 16 times the limit")
	}
}

// TestChecks: the Origin and Host policy of every ferry HTTP transport,
// and the subprotocol.
func TestChecks(t *testing.T) {
	leakcheck.Check(t)
	url, _ := serve(t, &websocket.Options{AllowedOrigins: []string{"https://app.example.com"}})
	for _, tc := range []struct {
		name   string
		header http.Header
		proto  []string
		want   int // HTTP status; 0: the upgrade succeeds
	}{
		{"plain", nil, []string{"mcp"}, 0},
		{"loopback origin", http.Header{"Origin": {"http://localhost:5173"}}, []string{"mcp"}, 0},
		{"allowed origin", http.Header{"Origin": {"https://app.example.com"}}, []string{"mcp"}, 0},
		{"foreign origin", http.Header{"Origin": {"https://evil.example"}}, []string{"mcp"}, http.StatusForbidden},
		{"rebound host", http.Header{"Host": {"evil.example"}}, []string{"mcp"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := tc.header.Clone()
			var host string
			if h := hdr.Get("Host"); h != "" {
				host = h
				hdr.Del("Host")
			}
			hc := &http.Client{Transport: hostRewriter{host: host}}
			c, resp, err := cws.Dial(context.Background(), url, &cws.DialOptions{HTTPHeader: hdr, HTTPClient: hc, Subprotocols: tc.proto})
			if tc.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				c.CloseNow()
				return
			}
			if err == nil {
				c.CloseNow()
				t.Fatal("upgraded")
			}
			if resp == nil || resp.StatusCode != tc.want {
				t.Fatalf("got %v, want HTTP %d", err, tc.want)
			}
		})
	}
	t.Run("no subprotocol", func(t *testing.T) {
		c, _, err := cws.Dial(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		_, _, err = c.Read(context.Background())
		if cws.CloseStatus(err) != cws.StatusPolicyViolation {
			t.Fatalf("read: %v", err)
		}
	})
	t.Run("client refuses http URL", func(t *testing.T) {
		_, err := (&websocket.Transport{URL: "http://127.0.0.1:1/"}).Open(context.Background())
		if err == nil || !strings.Contains(err.Error(), "not a ws:// or wss:// URL") {
			t.Fatal(err)
		}
	})
	t.Run("upgrade refused", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "no", http.StatusUnauthorized)
		}))
		defer ts.Close()
		_, err := (&websocket.Transport{URL: "ws" + strings.TrimPrefix(ts.URL, "http")}).Open(context.Background())
		var ue *websocket.UpgradeError
		if !errors.As(err, &ue) || ue.StatusCode != http.StatusUnauthorized {
			t.Fatalf("got %v", err)
		}
	})
}

type hostRewriter struct{ host string }

func (h hostRewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.host != "" {
		r.Host = h.host
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestClose: closing the handler ends every connection, including one
// whose request is still running, and the client sees it.
func TestClose(t *testing.T) {
	leakcheck.Check(t)
	url, h := serve(t, nil)
	c := connect(t, url, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Call(context.Background(), "block", nil)
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		h.Close()
		close(done)
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the blocked call succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end when the handler closed")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Handler.Close did not return")
	}
	if _, err := (&websocket.Transport{URL: url}).Open(context.Background()); err == nil {
		t.Fatal("a closed handler accepted a connection")
	}
}

// TestClosedStreamErr: a stream closed by this side answers Read and
// Write with jsonrpc.ErrClosed, the one error every transport and the
// connection use for it.
func TestClosedStreamErr(t *testing.T) {
	leakcheck.Check(t)
	url, _ := serve(t, nil)
	s, err := (&websocket.Transport{URL: url}).Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Read(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Read after Close: %v, want jsonrpc.ErrClosed", err)
	}
	if err := s.Write(context.Background(), &jsonrpc.Message{Method: "m"}); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Write after Close: %v, want jsonrpc.ErrClosed", err)
	}
}

// TestDialContext: the context given to Open bounds only the dialling.
func TestDialContext(t *testing.T) {
	leakcheck.Check(t)
	url, _ := serve(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Connect(ctx, &websocket.Transport{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	time.Sleep(20 * time.Millisecond)
	if _, err := c.Call(context.Background(), "echo", map[string]string{"message": "x"}); err != nil {
		t.Fatal(err)
	}
}

// TestKeepAlive: a peer that stops answering pings is dropped.
func TestKeepAlive(t *testing.T) {
	leakcheck.Check(t)
	url, _ := serve(t, &websocket.Options{KeepAlive: 50 * time.Millisecond})
	c, _, err := cws.Dial(context.Background(), url, &cws.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// This peer never reads, so it never answers a ping: within a few
	// intervals the server gives up and the connection ends.
	time.Sleep(400 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, _, err := c.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("the connection is still open: %v", err)
	}
}

func jsonUnmarshal(b []byte, v any) { json.Unmarshal(b, v) }
