package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// pipeClient connects a client with opts to s over an in-memory pipe.
func pipeClient(t *testing.T, s *server.Server, opts *client.Options) *client.Client {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		conn.Close()
		conn.Wait()
	})
	return c
}

type statsOut struct {
	Calls     int    `json:"calls"`
	Stateless bool   `json:"stateless"`
	Scope     string `json:"scope"`
}

func customServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "custom", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	calls := 0
	var mu sync.Mutex
	s.HandleMethod("acme/stats", func(ctx context.Context, req *server.Request) (any, error) {
		var p struct {
			Scope string `json:"scope"`
		}
		if err := json.Unmarshal(req.Params(), &p); len(req.Params()) > 0 && err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%v", err)
		}
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		return &statsOut{Calls: n, Stateless: req.Stateless(), Scope: p.Scope}, nil
	})
	return s
}

// TestClientMiddleware: client middleware sees every request, the
// handshake's included, in order, and may answer one itself; a custom
// method goes through it like any other.
func TestClientMiddleware(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    string
	}{
		{protocol.Version20260728, "outer server/discover,inner server/discover,outer tools/call,inner tools/call,outer tools/call,outer acme/stats,inner acme/stats"},
		{protocol.Version20251125, "outer initialize,inner initialize,outer tools/call,inner tools/call,outer tools/call,outer acme/stats,inner acme/stats"},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var mu sync.Mutex
			var seen []string
			record := func(tag string) intercept.Middleware {
				return func(next intercept.Handler) intercept.Handler {
					return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
						mu.Lock()
						seen = append(seen, tag+" "+req.Method)
						mu.Unlock()
						return next(ctx, req)
					}
				}
			}
			cache := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
					if req.Method == protocol.MethodToolsCall && req.Name() == "cached" {
						return intercept.Result{Value: jsontext.Value(`{"content":[{"type":"text","text":"from the cache"}]}`)}, nil
					}
					return next(ctx, req)
				}
			}
			c := pipeClient(t, customServer(), &client.Options{ProtocolVersion: tc.version,
				Sending: []intercept.Middleware{record("outer"), cache, record("inner")}})
			res, err := c.Call(t.Context(), "echo", map[string]string{"message": "hi"})
			if err != nil || res.Content[0].Text != "hi" {
				t.Fatalf("echo: %+v %v", res, err)
			}
			res, err = c.Call(t.Context(), "cached", nil)
			if err != nil || res.Content[0].Text != "from the cache" {
				t.Fatalf("cached: %+v %v", res, err)
			}
			var out statsOut
			if err := c.CallMethod(t.Context(), "acme/stats", map[string]string{"scope": "all"}, &out); err != nil {
				t.Fatal(err)
			}
			if out != (statsOut{Calls: 1, Stateless: tc.version == protocol.Version20260728, Scope: "all"}) {
				t.Errorf("acme/stats = %+v", out)
			}
			mu.Lock()
			got := strings.Join(seen, ",")
			mu.Unlock()
			if got != tc.want {
				t.Errorf("middleware saw\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// TestCallMethodErrors: an unknown method is the server's -32601; params
// that are not an object are refused before anything is sent.
func TestCallMethodErrors(t *testing.T) {
	for _, v := range []string{protocol.Version20260728, protocol.Version20251125} {
		c := pipeClient(t, customServer(), &client.Options{ProtocolVersion: v})
		var je *jsonrpc.Error
		if err := c.CallMethod(t.Context(), "acme/nothing", nil, nil); !errors.As(err, &je) || je.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("%s: unknown method: %v", v, err)
		}
		if err := c.CallMethod(t.Context(), "acme/stats", []int{1}, nil); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
			t.Errorf("%s: array params: %v", v, err)
		}
		if err := c.CallMethod(t.Context(), "acme/stats", nil, nil); err != nil {
			t.Errorf("%s: no params: %v", v, err)
		}
	}
}

// TestSubscribeContexts: Server.ResourceUpdated and the unsubscribe of
// Client.Subscribe take the caller's context: a cancelled one sends
// nothing.
func TestSubscribeContexts(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "sub", Version: "1"}, nil)
	s.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{}, nil
	})
	updates := make(chan string, 4)
	c := pipeClient(t, s, &client.Options{ProtocolVersion: protocol.Version20251125,
		OnResourceUpdated: func(uri string) { updates <- uri }})
	unsub, err := c.Subscribe(t.Context(), "test://r")
	if err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	s.ResourceUpdated(cancelled, "test://r")
	s.ResourceUpdated(context.Background(), "test://r")
	if got := <-updates; got != "test://r" {
		t.Fatalf("update %q", got)
	}
	select {
	case u := <-updates:
		t.Errorf("a second update %q, from the cancelled context", u)
	case <-time.After(100 * time.Millisecond):
	}
	if err := unsub(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("unsubscribe with a cancelled context: %v", err)
	}
	if err := unsub(t.Context()); err != nil {
		t.Errorf("unsubscribe: %v", err)
	}
}
