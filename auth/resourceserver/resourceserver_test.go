package resourceserver

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

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// issuer is an authorization server's signing side: its keys at /jwks.
type issuer struct {
	srv  *httptest.Server
	key  *ecdsa.PrivateKey
	kid  string
	jwks jose.JSONWebKeySet
}

func newIssuer(t *testing.T) *issuer {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is := &issuer{key: key, kid: "k1"}
	is.jwks.Keys = []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}
	mux := http.NewServeMux()
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.MarshalWrite(w, metadata.AuthorizationServer{Issuer: is.srv.URL, JWKSURI: is.srv.URL + "/jwks", TokenEndpoint: is.srv.URL + "/token"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(is.jwks)
		w.Write(b)
	})
	return is
}

// token signs an access token; change alters its claims before signing.
func (is *issuer) token(t *testing.T, key *ecdsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (is *issuer) claims(resource string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": is.srv.URL, "aud": resource, "sub": "alice", "client_id": "cli",
		"scope": "files:read", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
}

// protected is a ferry server with a tool that says who calls it and
// whether it saw a token, behind Config.Protect.
type protected struct {
	srv      *httptest.Server
	cfg      *Config
	resource string
}

func newProtected(t *testing.T, is *issuer) *protected {
	return newProtectedBy(t, is.srv.URL, &JWT{Issuer: is.srv.URL})
}

// newProtectedBy is newProtected with another authorization server and
// verifier.
func newProtectedBy(t *testing.T, issuer string, v Verifier) *protected {
	s := server.New(protocol.Implementation{Name: "files", Version: "1"}, nil)
	whoami := func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		c, ok := intercept.CallerFrom(ctx)
		if !ok {
			return "nobody", nil
		}
		return c.Subject + " via " + c.ClientID + " with " + strings.Join(c.Scopes, ","), nil
	}
	server.AddTool(s, &protocol.Tool{Name: "read"}, whoami)
	server.AddTool(s, &protocol.Tool{Name: "write"}, whoami)
	return protect(t, issuer, v, s)
}

// protect serves s behind a resource server whose tokens issuer issues
// and v verifies.
func protect(t *testing.T, issuer string, v Verifier, s *server.Server) *protected {
	h := streamablehandler.New(s, nil)
	t.Cleanup(func() { h.Close() })
	mux := http.NewServeMux()
	p := &protected{srv: httptest.NewServer(mux)}
	t.Cleanup(p.srv.Close)
	p.resource = p.srv.URL + "/mcp"
	p.cfg = &Config{
		Resource:             p.resource,
		AuthorizationServers: []string{issuer},
		Verifier:             v,
		Scopes:               []string{"files:read"},
		ToolScopes:           map[string][]string{"write": {"files:write"}},
		Implies:              map[string][]string{"files:admin": {"files:write", "files:read"}},
	}
	p.cfg.Mount(mux, "/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Error("the handler saw the client's token")
		}
		h.ServeHTTP(w, r)
	}))
	return p
}

// post sends one stateless tools/call (or a legacy one, without the
// stateless headers) with token.
func (p *protected) call(t *testing.T, token, tool string, stateless bool) (*http.Response, string) {
	t.Helper()
	var authz []string
	if token != "" {
		authz = []string{"Bearer " + token}
	}
	return p.send(t, authz, tool, stateless)
}

// send is call with the Authorization header values given.
func (p *protected) send(t *testing.T, authz []string, tool string, stateless bool) (*http.Response, string) {
	t.Helper()
	v := protocol.LatestVersion
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":%q,"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`, tool, v)
	req, _ := http.NewRequest("POST", p.resource, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if stateless {
		req.Header.Set("MCP-Protocol-Version", v)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", tool)
	}
	for _, a := range authz {
		req.Header.Add("Authorization", a)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestRefusals: each refusal with the status and challenge the MCP
// specification asks for.
func TestRefusals(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	meta := p.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	with := func(change func(map[string]any)) map[string]any {
		c := is.claims(p.resource)
		change(c)
		return c
	}
	tests := []struct {
		name      string
		token     string
		tool      string
		stateless bool
		status    int
		challenge string
	}{
		{"no token", "", "read", true, 401,
			fmt.Sprintf(`Bearer scope="files:read", resource_metadata=%q`, meta)},
		{"expired", is.token(t, is.key, "k1", with(func(c map[string]any) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token expired"`, meta)},
		{"another audience", is.token(t, is.key, "k1", with(func(c map[string]any) { c["aud"] = "https://other.example.com/mcp" })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token was issued for another resource"`, meta)},
		{"audience with a trailing slash is another", is.token(t, is.key, "k1", with(func(c map[string]any) { c["aud"] = p.resource + "/" })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token was issued for another resource"`, meta)},
		{"unknown signing key", is.token(t, other, "k2", is.claims(p.resource)), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token is signed with an unknown key"`, meta)},
		{"known kid, other key", is.token(t, other, "k1", is.claims(p.resource)), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token's signature does not verify"`, meta)},
		{"another issuer", is.token(t, is.key, "k1", with(func(c map[string]any) { c["iss"] = "https://evil.example.com" })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token comes from another issuer"`, meta)},
		{"no expiry", is.token(t, is.key, "k1", with(func(c map[string]any) { delete(c, "exp") })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token has no expiry"`, meta)},
		{"not a JWT", "opaque-token", "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token is not a signed JWT of an accepted algorithm"`, meta)},
		{"DPoP-bound token as bearer", is.token(t, is.key, "k1", with(func(c map[string]any) { c["cnf"] = map[string]string{"jkt": "x"} })), "read", true, 401,
			fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description="the token is bound to a key and cannot be used as a bearer token here"`, meta)},
		{"without the server's scope", is.token(t, is.key, "k1", with(func(c map[string]any) { c["scope"] = "other" })), "read", true, 403,
			fmt.Sprintf(`Bearer error="insufficient_scope", scope="files:read", resource_metadata=%q, error_description="the token lacks scopes this server needs"`, meta)},
		{"without the tool's scope (stateless)", is.token(t, is.key, "k1", is.claims(p.resource)), "write", true, 403,
			fmt.Sprintf(`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata=%q, error_description="the token lacks scopes this tool needs"`, meta)},
		{"without the tool's scope (legacy body)", is.token(t, is.key, "k1", is.claims(p.resource)), "write", false, 403,
			fmt.Sprintf(`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata=%q, error_description="the token lacks scopes this tool needs"`, meta)},
		{"valid", is.token(t, is.key, "k1", is.claims(p.resource)), "read", true, 200, ""},
		{"a broader scope implies the tool's", is.token(t, is.key, "k1", with(func(c map[string]any) { c["scope"] = "files:admin" })), "write", true, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := p.call(t, tt.token, tt.tool, tt.stateless)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.token != "" && strings.Contains(body, tt.token) {
				t.Error("the answer shows the token")
			}
		})
	}
}

// TestRefusedHeaders: credentials of another scheme are no credentials
// (401 without an error code), and an Authorization header that cannot
// be read is a malformed request (400 invalid_request), as RFC 6750 §3.1
// and the MCP specification's error table ask.
func TestRefusedHeaders(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	meta := p.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	good := "Bearer " + is.token(t, is.key, "k1", is.claims(p.resource))
	malformed := func(why string) string {
		return fmt.Sprintf(`Bearer error="invalid_request", scope="files:read", resource_metadata=%q, error_description=%q`, meta, why)
	}
	tests := []struct {
		name      string
		authz     []string
		status    int
		challenge string
	}{
		{"another scheme", []string{"Basic YWxpY2U6c2VjcmV0"}, 401, fmt.Sprintf(`Bearer scope="files:read", resource_metadata=%q`, meta)},
		{"two Authorization headers", []string{good, good}, 400, malformed("the request has more than one Authorization header")},
		{"Bearer without a token", []string{"Bearer"}, 400, malformed("the Bearer credential is not a token")},
		{"Bearer with two words", []string{"Bearer abc def"}, 400, malformed("the Bearer credential is not a token")},
		{"Bearer with a quote", []string{`Bearer "abc"`}, 400, malformed("the Bearer credential is not a token")},
		{"the scheme in another case", []string{strings.Replace(good, "Bearer", "bEaReR", 1)}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := p.send(t, tt.authz, "read", true)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tt.challenge)
			}
		})
	}
}

// TestIntrospectionRefusals: the refusals of TestRefusals, for opaque
// tokens checked by introspection (RFC 7662).
func TestIntrospectionRefusals(t *testing.T) {
	now := time.Now()
	var resource string
	answers := map[string]func() map[string]any{
		"good": func() map[string]any {
			return map[string]any{"active": true, "sub": "dave", "client_id": "c", "scope": "files:read", "aud": resource, "exp": now.Add(time.Hour).Unix()}
		},
		"expired": func() map[string]any { return map[string]any{"active": false} },
		"elsewhere": func() map[string]any {
			return map[string]any{"active": true, "sub": "dave", "scope": "files:read", "aud": "https://other.example.com/mcp"}
		},
	}
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		a, ok := answers[r.Form.Get("token")]
		if !ok {
			json.MarshalWrite(w, map[string]any{"active": false})
			return
		}
		json.MarshalWrite(w, a())
	}))
	defer as.Close()
	p := newProtectedBy(t, as.URL, &Introspection{Endpoint: as.URL})
	resource = p.resource
	meta := p.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	invalid := func(why string) string {
		return fmt.Sprintf(`Bearer error="invalid_token", scope="files:read", resource_metadata=%q, error_description=%q`, meta, why)
	}
	tests := []struct {
		name, token, tool string
		status            int
		challenge         string
	}{
		{"no token", "", "read", 401, fmt.Sprintf(`Bearer scope="files:read", resource_metadata=%q`, meta)},
		{"expired (inactive)", "expired", "read", 401, invalid("the token is not active")},
		{"unknown to the authorization server", "forged", "read", 401, invalid("the token is not active")},
		{"another audience", "elsewhere", "read", 401, invalid("the token was issued for another resource")},
		{"without the tool's scope", "good", "write", 403,
			fmt.Sprintf(`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata=%q, error_description="the token lacks scopes this tool needs"`, meta)},
		{"valid", "good", "read", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := p.call(t, tt.token, tt.tool, true)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, tt.challenge)
			}
			if tt.status == 200 && !strings.Contains(body, "dave via c with files:read") {
				t.Errorf("the tool answered %s", body)
			}
		})
	}
}

func TestHandlerSeesCaller(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	_, body := p.call(t, is.token(t, is.key, "k1", is.claims(p.resource)), "read", true)
	if !strings.Contains(body, "alice via cli with files:read") {
		t.Fatalf("the tool answered %s", body)
	}
}

func TestMetadataDocument(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	resp, err := http.Get(p.srv.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var prm metadata.ProtectedResource
	json.UnmarshalRead(resp.Body, &prm)
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" || prm.Resource != p.resource ||
		len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != is.srv.URL || prm.ScopesSupported[0] != "files:read" {
		t.Fatalf("metadata %+v, headers %v", prm, resp.Header)
	}
	if err := metadata.CheckResource(prm.Resource, p.resource); err != nil {
		t.Fatal(err)
	}
}

// TestSessionBoundToCaller: a legacy session opened by one user is not
// another's to use.
func TestSessionBoundToCaller(t *testing.T) {
	is := newIssuer(t)
	p := newProtected(t, is)
	alice := is.token(t, is.key, "k1", is.claims(p.resource))
	bobClaims := is.claims(p.resource)
	bobClaims["sub"] = "bob"
	bob := is.token(t, is.key, "k1", bobClaims)
	send := func(token, sid, body string) *http.Response {
		req, _ := http.NewRequest("POST", p.resource, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := send(alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if r := send(bob, sid, ping); r.StatusCode != 404 {
		t.Errorf("bob used alice's session: %d", r.StatusCode)
	}
	if r := send(alice, sid, ping); r.StatusCode != 200 {
		t.Errorf("alice's own session: %d", r.StatusCode)
	}
}

func TestIntrospection(t *testing.T) {
	answers := map[string]map[string]any{
		"good":      {"active": true, "sub": "carol", "client_id": "c", "scope": "a b", "aud": []string{"https://rs/mcp"}, "exp": time.Now().Add(time.Hour).Unix()},
		"inactive":  {"active": false},
		"elsewhere": {"active": true, "aud": "https://other/mcp"},
		"no-aud":    {"active": true, "sub": "x"},
	}
	calls := 0
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if id, secret, _ := r.BasicAuth(); id != "rs" || secret != "s" {
			w.WriteHeader(401)
			return
		}
		r.ParseForm()
		json.MarshalWrite(w, answers[r.Form.Get("token")])
	}))
	defer as.Close()
	v := &Introspection{Endpoint: as.URL, ClientID: "rs", ClientSecret: "s"}
	ctx := context.Background()
	c, err := v.Verify(ctx, "good", "https://rs/mcp")
	if err != nil || c.Subject != "carol" || strings.Join(c.Scopes, " ") != "a b" {
		t.Fatalf("good: %+v, %v", c, err)
	}
	v.Verify(ctx, "good", "https://rs/mcp")
	if calls != 1 {
		t.Errorf("%d introspections for one token, want 1 (cached)", calls)
	}
	for _, tok := range []string{"inactive", "elsewhere", "no-aud"} {
		if _, err := v.Verify(ctx, tok, "https://rs/mcp"); !isInvalid(err) {
			t.Errorf("%s: %v, want an invalid token", tok, err)
		}
	}
	v2 := &Introspection{Endpoint: as.URL, ClientID: "rs", ClientSecret: "wrong"}
	if _, err := v2.Verify(ctx, "good", "https://rs/mcp"); err == nil || isInvalid(err) {
		t.Errorf("the endpoint refusing the resource server: %v, want a server error (503)", err)
	}
}

// FuzzBearer: reading the Authorization header never panics, and what
// it returns is either a b64token or a reason the header is malformed.
func FuzzBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc.def-ghi_~+/==", "Bearer", "bearer  x", "Basic a", "Bearer a b", "", "Bearer ==", "DPoP x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Authorization", h)
		tok, malformed := bearer(r)
		if tok != "" && (malformed != "" || !isB64Token(tok) || !strings.Contains(h, tok)) {
			t.Fatalf("%q: token %q, malformed %q", h, tok, malformed)
		}
	})
}
