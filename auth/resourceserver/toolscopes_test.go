package resourceserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// adminServer is a ferry server with the tools "admin", which needs the
// scope admin, and "public", behind Config.Protect; ran counts the calls
// of admin that ran.
type adminServer struct {
	url string
	ran atomic.Int32
}

func newAdminServer(t *testing.T, is *issuer) *adminServer {
	a := &adminServer{}
	s := server.New(protocol.Implementation{Name: "admin", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "admin"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		a.ran.Add(1)
		return "admin ran", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "public"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "public ran", nil
	})
	h := streamablehandler.New(s, nil)
	t.Cleanup(func() { h.Close() })
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	a.url = srv.URL + "/mcp"
	cfg := &Config{
		Resource:             a.url,
		AuthorizationServers: []string{is.srv.URL},
		Verifier:             &JWT{Issuer: is.srv.URL},
		Scopes:               []string{"mcp"},
		ToolScopes:           map[string][]string{"admin": {"admin"}},
	}
	cfg.Mount(mux, "/mcp", h)
	return a
}

func (a *adminServer) post(t *testing.T, token, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`

// TestToolScopesFollowTheBody: the scopes a call needs are those of the
// tool the server runs, read from the body as the server reads it,
// whatever the Mcp-Method and Mcp-Name headers say, in both eras. A
// token with the scope mcp only never runs admin.
func TestToolScopesFollowTheBody(t *testing.T) {
	is := newIssuer(t)
	a := newAdminServer(t, is)
	claims := is.claims(a.url)
	claims["scope"] = "mcp"
	token := is.token(t, is.key, "k1", claims)

	req, _ := http.NewRequest(http.MethodPost, a.url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	legacy := func(extra map[string]string) map[string]string {
		h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	stateless := func(name string) map[string]string {
		return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	call := func(nameJSON string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + nameJSON + `,"arguments":{}}}`
	}
	statelessCall := func(nameJSON string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + nameJSON + `,"arguments":{},` + statelessMeta + `}}`
	}
	tests := []struct {
		name    string
		body    string
		headers map[string]string
		status  int
	}{
		{"stateless, Mcp-Name in base64", statelessCall(`"admin"`), stateless("=?base64?YWRtaW4=?="), http.StatusForbidden},
		{"stateless, name escaped in the body", statelessCall(`"\u0061dmin"`), stateless("admin"), http.StatusForbidden},
		{"legacy, Mcp-Method ping", call(`"admin"`), legacy(map[string]string{"Mcp-Method": "ping"}), http.StatusForbidden},
		{"legacy, Mcp-Name public", call(`"admin"`), legacy(map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "public"}), http.StatusForbidden},
		{"legacy, spaces and escapes", `{ "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools\/call" , "params" : { "n\u0061me" : "\u0061dmin" } }`, legacy(nil), http.StatusForbidden},
		{"legacy batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},` + call(`"admin"`) + `]`, legacy(map[string]string{"Mcp-Method": "ping"}), http.StatusForbidden},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"public","n\u0061me":"admin"}}`, legacy(nil), http.StatusBadRequest},
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin"`, legacy(nil), http.StatusBadRequest},
		{"empty batch", `[]`, legacy(nil), http.StatusBadRequest},
		{"legacy public", call(`"public"`), legacy(nil), http.StatusOK},
		{"stateless public", statelessCall(`"public"`), stateless("public"), http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := a.post(t, token, tt.body, tt.headers)
			if status != tt.status {
				t.Errorf("status %d, want %d: %s", status, tt.status, body)
			}
			if tt.status == http.StatusOK && !strings.Contains(body, "public ran") {
				t.Errorf("the call answered %s", body)
			}
		})
	}
	if n := a.ran.Load(); n != 0 {
		t.Errorf("admin ran %d times for a token without the scope admin", n)
	}
}
