package resourceserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// ToolScopesFunc decides the scopes of a call by the caller and the
// endpoint too: Protect answers 403 insufficient_scope naming them, and
// the tool does not run; another caller's call of the same tool runs.
func TestToolScopesFunc(t *testing.T) {
	is := newIssuer(t)
	var ran atomic.Int32
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "deploy"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		ran.Add(1)
		return "deployed", nil
	})
	h := streamablehandler.New(s, nil)
	t.Cleanup(func() { h.Close() })
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	var seen atomic.Value
	cfg := &Config{
		Resource:             srv.URL + "/mcp",
		AuthorizationServers: []string{is.srv.URL},
		Verifier:             &JWT{Issuer: is.srv.URL},
		ToolScopesFunc: func(r *http.Request, c *intercept.Caller, tool string) []string {
			seen.Store(r.URL.Path + " " + tool)
			if c.Subject == "alice" {
				return []string{"deploy:prod"}
			}
			return nil
		},
	}
	cfg.Mount(mux, "/mcp", h)
	a := &adminServer{url: cfg.Resource}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{},` + statelessMeta + `}}`
	headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "deploy"}
	for _, tc := range []struct {
		sub, scope string
		status     int
		ran        int32
	}{
		{"alice", "files:read", http.StatusForbidden, 0},
		{"alice", "files:read deploy:prod", http.StatusOK, 1},
		{"bob", "files:read", http.StatusOK, 2},
	} {
		claims := is.claims(cfg.Resource)
		claims["sub"], claims["scope"] = tc.sub, tc.scope
		status, body := a.post(t, is.token(t, is.key, "k1", claims), call, headers)
		if status != tc.status || ran.Load() != tc.ran {
			t.Fatalf("%s with %q: %d %s (ran %d)", tc.sub, tc.scope, status, body, ran.Load())
		}
	}
	if got := seen.Load(); got != "/mcp deploy" {
		t.Fatalf("ToolScopesFunc saw %v", got)
	}
	claims := is.claims(cfg.Resource)
	claims["sub"] = "alice"
	req, _ := http.NewRequest(http.MethodPost, cfg.Resource, strings.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+is.token(t, is.key, "k1", claims))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 403 || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="deploy:prod"`) {
		t.Fatalf("%d %q", resp.StatusCode, ch)
	}
}
