package resourceserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/websocket"
)

// TestToolScopesMiddleware: behind Protect, a WebSocket connection is one
// upgrade GET, and its tools/call messages never cross the HTTP layer;
// with ToolScopesMiddleware in the server, the scopes of a tool hold for
// them all the same, in both eras. A token with the scope mcp only is
// refused admin with a JSON-RPC error naming the scopes (the connection
// is open: there is no HTTP answer left to make a 403), and calls public;
// one with admin calls admin. A connection with no caller at all (an
// in-memory pipe, no Protect) is refused admin too.
func TestToolScopesMiddleware(t *testing.T) {
	is := newIssuer(t)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/ws"
	cfg := &Config{Resource: url, AuthorizationServers: []string{is.srv.URL}, Verifier: &JWT{Issuer: is.srv.URL},
		Scopes: []string{"mcp"}, ToolScopes: map[string][]string{"admin": {"admin"}}}
	var ran atomic.Int32
	s := server.New(protocol.Implementation{Name: "admin", Version: "1"},
		&server.Options{Receiving: []intercept.Middleware{cfg.ToolScopesMiddleware()}})
	defer s.Close()
	server.AddTool(s, &protocol.Tool{Name: "admin"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		ran.Add(1)
		return "admin ran", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "public"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "public ran", nil
	})
	h := websocket.NewHandler(s, nil)
	defer h.Close()
	cfg.Mount(mux, "/ws", h)

	webSocket := func(scope string) client.Transport {
		claims := is.claims(url)
		claims["scope"] = scope
		return &websocket.Transport{URL: "ws" + strings.TrimPrefix(url, "http"),
			Header: http.Header{"Authorization": {"Bearer " + is.token(t, is.key, "k1", claims)}}}
	}
	pipe := func() client.Transport {
		a, b := memory.NewPipe(jsonrpc.Limits{})
		go s.Run(context.Background(), b)
		return client.StreamTransport{Stream: a}
	}
	for _, tt := range []struct {
		name      string
		version   string
		transport func() client.Transport
		adminRuns bool
	}{
		{"websocket, mcp", protocol.Version20251125, func() client.Transport { return webSocket("mcp") }, false},
		{"websocket, mcp", protocol.Version20260728, func() client.Transport { return webSocket("mcp") }, false},
		{"websocket, mcp admin", protocol.Version20251125, func() client.Transport { return webSocket("mcp admin") }, true},
		{"websocket, mcp admin", protocol.Version20260728, func() client.Transport { return webSocket("mcp admin") }, true},
		{"no caller", protocol.Version20260728, pipe, false},
	} {
		t.Run(tt.name+"/"+tt.version, func(t *testing.T) {
			c, err := client.Connect(t.Context(), tt.transport(), &client.Options{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if res, err := c.Call(t.Context(), "public", nil); err != nil || res.Content[0].Text != "public ran" {
				t.Fatalf("public: %v %v", res, err)
			}
			before := ran.Load()
			res, err := c.Call(t.Context(), "admin", nil)
			var je *jsonrpc.Error
			switch {
			case tt.adminRuns && (err != nil || res.Content[0].Text != "admin ran"):
				t.Errorf("admin with the scope: %v %v", res, err)
			case !tt.adminRuns && (!errors.As(err, &je) || string(je.Data) != `{"error":"insufficient_scope","scope":"mcp admin"}`):
				t.Errorf("admin without the scope: result %v, error %v, want insufficient_scope naming mcp admin", res, err)
			}
			if runs := ran.Load() - before; (runs == 1) != tt.adminRuns {
				t.Errorf("admin ran %d times, want it to run: %v", runs, tt.adminRuns)
			}
		})
	}
}

// TestToolScopesRefuseUnheldWebSocket: with ToolScopes and no
// ToolScopesMiddleware made, Protect refuses a WebSocket upgrade (501)
// rather than let through a connection whose calls it cannot check; a
// Config without ToolScopes lets it through.
func TestToolScopesRefuseUnheldWebSocket(t *testing.T) {
	is := newIssuer(t)
	for _, tt := range []struct {
		name       string
		toolScopes map[string][]string
		wantStatus int // 0: connected
	}{
		{"tool scopes", map[string][]string{"admin": {"admin"}}, http.StatusNotImplemented},
		{"no tool scopes", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mux := http.NewServeMux()
			srv := httptest.NewServer(mux)
			defer srv.Close()
			url := srv.URL + "/ws"
			cfg := &Config{Resource: url, AuthorizationServers: []string{is.srv.URL}, Verifier: &JWT{Issuer: is.srv.URL},
				Scopes: []string{"mcp"}, ToolScopes: tt.toolScopes}
			s := server.New(protocol.Implementation{Name: "admin", Version: "1"}, nil)
			defer s.Close()
			h := websocket.NewHandler(s, nil)
			defer h.Close()
			cfg.Mount(mux, "/ws", h)
			claims := is.claims(url)
			claims["scope"] = "mcp"
			tr := &websocket.Transport{URL: "ws" + strings.TrimPrefix(url, "http"),
				Header: http.Header{"Authorization": {"Bearer " + is.token(t, is.key, "k1", claims)}}}
			c, err := client.Connect(t.Context(), tr, nil)
			var ue *websocket.UpgradeError
			switch {
			case tt.wantStatus == 0 && err != nil:
				t.Fatalf("connect: %v", err)
			case tt.wantStatus == 0:
				c.Close()
			case !errors.As(err, &ue) || ue.StatusCode != tt.wantStatus:
				t.Fatalf("connect: %v, want an upgrade refused with %d", err, tt.wantStatus)
			}
		})
	}
}
