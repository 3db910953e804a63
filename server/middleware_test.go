package server_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// Middleware sees every request and notification after the era is
// settled (a legacy session's initialize too), in order, and may answer
// one itself.
func TestMiddleware(t *testing.T) {
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
	answer := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodToolsCall && req.Name() == "intercepted" {
				return intercept.Result{Value: &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("from middleware")}}}, nil
			}
			return next(ctx, req)
		}
	}
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{
		Receiving: []intercept.Middleware{record("outer"), record("inner"), answer},
	})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.Version20260728} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		a, b := memory.NewPipe(jsonrpc.Limits{})
		ctx, cancel := context.WithCancel(context.Background())
		go s.Run(ctx, a)
		c, err := client.Connect(ctx, client.StreamTransport{Stream: b}, &client.Options{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Call(ctx, "echo", map[string]string{"message": "hi"})
		if err != nil || res.Content[0].Text != "hi" {
			t.Errorf("%s: echo: %+v %v", version, res, err)
		}
		res, err = c.Call(ctx, "intercepted", nil)
		if err != nil || res.Content[0].Text != "from middleware" {
			t.Errorf("%s: intercepted: %+v %v", version, res, err)
		}
		want := []string{"outer tools/call", "inner tools/call", "outer tools/call", "inner tools/call"}
		if version == protocol.Version20260728 {
			want = append([]string{"outer server/discover", "inner server/discover"}, want...)
		} else {
			// The initialized notification is served in order with the
			// notifications, maybe after the first call has started.
			want = append([]string{"outer initialize", "inner initialize",
				"outer notifications/initialized", "inner notifications/initialized"}, want...)
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				if n >= len(want) {
					break
				}
			}
			mu.Lock()
			slices.Sort(seen)
			mu.Unlock()
			slices.Sort(want)
		}
		mu.Lock()
		got := strings.Join(seen, ",")
		mu.Unlock()
		if got != strings.Join(want, ",") {
			t.Errorf("%s: middleware saw %v, want %v", version, seen, want)
		}
		c.Close()
		cancel()
	}
}
