package gateway_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A call of a view's tool that an access rule would allow with a scope
// the token lacks is answered 403 insufficient_scope naming it, before
// it is served, as the same call on /mcp is: the client can step up.
func TestViewInsufficientScope(t *testing.T) {
	// The authorization server's signing side: its keys at /jwks.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	jwks, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(jwks) }))
	defer as.Close()

	up := server.New(protocol.Implementation{Name: "ci", Version: "1"}, nil)
	server.AddTool(up, &protocol.Tool{Name: "deploy"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "deployed", nil })
	uh := streamablehandler.New(up, nil)
	us := httptest.NewServer(uh)
	t.Cleanup(func() { uh.Close(); us.CloseClientConnections(); us.Close() })

	f, err := config.Parse("ferry.json", []byte(`{"mcpServers": {},
		"views": {"ops": {"tools": {"ci__deploy": {"name": "ship"}}}},
		"access": {"rules": [{"allow": {"scopes": ["deploy"]}, "tools": ["ci__deploy"]}]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := config.ReadViews([]*config.File{f}, config.Vars{})
	if err != nil {
		t.Fatal(err)
	}
	views, err := view.New(cv)
	if err != nil {
		t.Fatal(err)
	}
	var ac config.Access
	if _, err := f.Section("access", &ac); err != nil {
		t.Fatal(err)
	}
	rules, err := access.Compile(&ac)
	if err != nil {
		t.Fatal(err)
	}
	live := access.NewLive(rules)
	var g *gateway.Gateway
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { g.ServeHTTP(w, r) }))
	rs := &resourceserver.Config{
		Resource:             ts.URL + "/mcp",
		AuthorizationServers: []string{as.URL},
		Verifier:             &resourceserver.JWT{Issuer: as.URL, JWKSURL: as.URL},
		ToolScopesFunc:       live.ToolScopes("__", true),
	}
	g, err = gateway.New([]*config.Server{{Name: "ci", Transport: config.HTTP, URL: us.URL}}, &gateway.Options{
		Views:      views,
		Auth:       rs.Protect,
		Middleware: []intercept.Middleware{live.Middleware()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); g.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}

	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	token := func(scope string) string {
		now := time.Now()
		s, err := jwt.Signed(signer).Claims(map[string]any{"iss": as.URL, "aud": rs.Resource, "sub": "dev", "client_id": "cli",
			"scope": scope, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	call := func(path, tool, scope string) (int, string, string) {
		v := protocol.Version20260728
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, tool, v)
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", v)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
		req.Header.Set("Authorization", "Bearer "+token(scope))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
	}
	for _, tc := range []struct{ path, tool string }{{"/mcp", "ci__deploy"}, {"/views/ops/mcp", "ship"}} {
		code, challenge, body := call(tc.path, tc.tool, "read")
		if code != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `scope="deploy"`) {
			t.Errorf("%s %s without the deploy scope: %d %q %s", tc.path, tc.tool, code, challenge, body)
		}
		if code, _, body := call(tc.path, tc.tool, "deploy"); code != http.StatusOK || !strings.Contains(body, "deployed") {
			t.Errorf("%s %s with the deploy scope: %d %s", tc.path, tc.tool, code, body)
		}
	}
}
