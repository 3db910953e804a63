package client_test

import (
	"context"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestSendingMiddlewareAddsMeta: what sending middleware puts in
// Request.Meta reaches the server in the request's _meta, whatever built
// the params (the handshake, a tools/call, a custom method with a _meta
// of its own), over the caller's members of the same name, under the
// stateless fields the protocol puts there, and without writing to the
// caller's map.
func TestSendingMiddlewareAddsMeta(t *testing.T) {
	for _, tc := range []struct {
		version   string
		handshake string
	}{
		{protocol.Version20260728, protocol.MethodDiscover},
		{protocol.Version20251125, protocol.MethodInitialize},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var mu sync.Mutex
			got := map[string]protocol.Meta{}
			record := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
					if req := server.RequestOf(ir); req != nil {
						mu.Lock()
						got[ir.Method] = req.Meta()
						mu.Unlock()
					}
					return next(ctx, ir)
				}
			}
			s := server.New(protocol.Implementation{Name: "meta", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{record}})
			server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
				Message string `json:"message"`
			}) (string, error) {
				return in.Message, nil
			})
			s.HandleMethod("acme/stats", func(ctx context.Context, req *server.Request) (any, error) {
				return &statsOut{}, nil
			})
			add := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
					req.Meta = protocol.Meta{"acme/added": req.Method, "acme/over": "middleware"}
					if req.Stateless {
						req.Meta[protocol.MetaProtocolVersion] = "1999-01-01"
					}
					return next(ctx, req)
				}
			}
			c := pipeClient(t, s, &client.Options{ProtocolVersion: tc.version, Sending: []intercept.Middleware{add}})
			own := protocol.Meta{"acme/own": "kept", "acme/over": "caller"}
			res, err := c.CallTool(t.Context(), &protocol.CallToolParams{Name: "echo", Arguments: []byte(`{"message":"hi"}`), Meta: own})
			if err != nil || res.Content[0].Text != "hi" {
				t.Fatalf("echo: %+v %v", res, err)
			}
			if err := c.CallMethod(t.Context(), "acme/stats", map[string]any{"scope": "all", "_meta": map[string]string{"acme/own": "custom"}}, nil); err != nil {
				t.Fatal(err)
			}
			if own["acme/over"] != "caller" || len(own) != 2 {
				t.Errorf("the caller's _meta was written to: %v", own)
			}
			mu.Lock()
			defer mu.Unlock()
			for method, wantOwn := range map[string]any{tc.handshake: nil, protocol.MethodToolsCall: "kept", "acme/stats": "custom"} {
				m := got[method]
				if m["acme/added"] != method || m["acme/over"] != "middleware" || m["acme/own"] != wantOwn {
					t.Errorf("%s: the server got _meta %v", method, m)
				}
				if pv, ok := m[protocol.MetaProtocolVersion]; ok && pv != tc.version {
					t.Errorf("%s: middleware overrode the protocol's %s: %v", method, protocol.MetaProtocolVersion, pv)
				}
			}
		})
	}
}
