package interop

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/protocol"
)

// TestOAuthRefusals: the resource server middleware refuses real
// tokens of oidc-provider that are not good for the call (no token, a
// token for another resource, a token without the tool's scope) with the
// status and WWW-Authenticate challenge the MCP specification asks for.
// (Expired tokens and unknown signing keys are in
// auth/resourceserver's TestRefusals, with tokens signed there.)
func TestOAuthRefusals(t *testing.T) {
	issuer := startOIDCProvider(t)
	mine := protectedServer(t, issuer, &resourceserver.JWT{Issuer: issuer}, []string{"mcp:read"})
	other := protectedServer(t, issuer, &resourceserver.JWT{Issuer: issuer}, []string{"mcp:read"})
	b := newBrowser("erin", "any")
	a := &auth.Authorizer{Server: mine, Grant: &auth.AuthorizationCode{
		Authorize: func(ctx context.Context, authURL, redirect string) (url.Values, error) {
			back, err := url.Parse(b.authorize(t, authURL, redirect))
			if err != nil {
				return nil, err
			}
			return back.Query(), nil
		},
	}}
	tok, err := a.Login(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	challenge := func(server, params string) string {
		u, _ := url.Parse(server)
		return fmt.Sprintf(`Bearer %sresource_metadata="%s://%s/.well-known/oauth-protected-resource%s"`, params, u.Scheme, u.Host, u.Path)
	}
	tests := []struct {
		name, server, token, tool string
		status                    int
		challenge                 string
	}{
		{"no token", mine, "", "whoami", 401, challenge(mine, `scope="mcp:read", `)},
		{"another resource's token", other, tok.AccessToken, "whoami", 401,
			challenge(other, `error="invalid_token", scope="mcp:read", `) + `, error_description="the token was issued for another resource"`},
		{"without the tool's scope", mine, tok.AccessToken, "write", 403,
			challenge(mine, `error="insufficient_scope", scope="mcp:read mcp:write", `) + `, error_description="the token lacks scopes this tool needs"`},
		{"good", mine, tok.AccessToken, "whoami", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := callTool(t, tt.server, tt.token, tt.tool)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.status == 200 && !strings.Contains(body, "erin mcp:read") {
				t.Errorf("whoami answered %s", body)
			}
		})
	}
}

// callTool posts one stateless tools/call of tool to server, with a
// bearer token unless it is empty.
func callTool(t *testing.T, server, token, tool string) (*http.Response, string) {
	t.Helper()
	v := protocol.LatestVersion
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, tool, v)
	req, _ := http.NewRequestWithContext(t.Context(), "POST", server, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", v)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}
