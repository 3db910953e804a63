package interop

// OAuth end to end, against authorization servers we did not write, on
// loopback: oidc-provider (npm, pinned) and zitadel's example OpenID
// Provider (Go, pinned in zitadelop/go.mod). The user and the browser are
// played by the test (their login and consent pages are HTML forms).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// oauthEnv is a ferry environment whose configuration names one
// protected server, "srv", and whose token store is a directory of the
// test (XDG_CONFIG_HOME).
type oauthEnv struct {
	*e2e
	url, config, store string
}

func newOAuthEnv(t *testing.T, serverURL, entryExtra string) *oauthEnv {
	e := newE2E(t)
	home := t.TempDir()
	e.env["XDG_CONFIG_HOME"] = home
	e.env["HOME"] = home
	cfg := filepath.Join(t.TempDir(), "ferry.json")
	entry := fmt.Sprintf(`{"type":"http","url":%q%s}`, serverURL, entryExtra)
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"srv":`+entry+`}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return &oauthEnv{e2e: e, url: serverURL, config: cfg, store: filepath.Join(home, "ferry", "oauth")}
}

// record reads the stored record of the server.
func (o *oauthEnv) record(t *testing.T) *auth.Record {
	t.Helper()
	rec, err := (&auth.FileStore{Dir: o.store}).Load(context.Background(), o.url)
	if err != nil || rec == nil {
		t.Fatalf("the stored record: %v, %v", rec, err)
	}
	return rec
}

// expire makes the stored token expired, as time would, for the next
// ferry run to refresh it.
func (o *oauthEnv) expire(t *testing.T) {
	t.Helper()
	err := (&auth.FileStore{Dir: o.store}).Update(context.Background(), o.url, func(r *auth.Record) (*auth.Record, error) {
		r.Token.Expiry = time.Now().Add(-time.Minute)
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOAuthOIDCProvider: ferry login against oidc-provider (dynamic
// registration, PKCE, resource indicators, iss), then ferry tools and
// ferry call against a ferry server that checks the JWT access tokens
// against oidc-provider's keys; a refresh; two processes refreshing at
// once; logout and refusals with exit code 3; no secret in a trace.
func TestOAuthOIDCProvider(t *testing.T) {
	issuer := startOIDCProvider(t)
	server := protectedServer(t, issuer, &resourceserver.JWT{Issuer: issuer}, []string{"mcp:read"})
	o := newOAuthEnv(t, server, "")
	ferry := func(code int, args ...string) result {
		return o.mustRun(t, code, "", append([]string{"--config", o.config, "--format", "json"}, args...)...)
	}

	// Not logged in: refused, exit code 3.
	ferry(exitAuthCode, "call", "srv.whoami")

	// Logged in: the token is stored, 0600, and works.
	r := o.ferryLogin(t, newBrowser("alice", "any"), "--config", o.config, "login", "srv")
	if r.code != 0 {
		t.Fatalf("ferry login: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	rec := o.record(t)
	tok := rec.Token
	if tok.Issuer != issuer || tok.Resource != server || tok.RefreshToken == "" || !strings.Contains(strings.Join(tok.Granted, " "), "mcp:read") {
		t.Fatalf("stored token %v (resource %s)", tok, tok.Resource)
	}
	p, _ := (&auth.FileStore{Dir: o.store}).Path(server)
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v, %v", p, fi.Mode(), err)
	}
	if reg := rec.Clients[issuer]; reg == nil || !strings.HasPrefix(reg.RedirectURI, "http://127.0.0.1:") {
		t.Fatalf("registration %v", reg)
	}
	if r := ferry(0, "tools", "srv"); !strings.Contains(r.stdout, "whoami") || !strings.Contains(r.stdout, "write") {
		t.Fatalf("ferry tools: %s", r.stdout)
	}
	if r := ferry(0, "call", "srv.whoami"); !strings.Contains(r.stdout, "alice mcp:read") {
		t.Fatalf("ferry call: %s", r.stdout)
	}
	// A tool that needs a scope the token lacks: refused, exit code 3.
	if r := ferry(exitAuthCode, "call", "srv.write"); !strings.Contains(r.stderr, "insufficient_scope") && !strings.Contains(r.stderr, "403") {
		t.Fatalf("ferry call srv.write: %s", r.stderr)
	}
	// The status says who, without a secret.
	r = ferry(0, "auth", "status", "srv")
	var status []struct {
		LoggedIn bool   `json:"loggedIn"`
		Issuer   string `json:"issuer"`
	}
	json.Unmarshal([]byte(r.stdout), &status)
	if len(status) != 1 || !status[0].LoggedIn || status[0].Issuer != issuer || strings.Contains(r.stdout, tok.AccessToken) || strings.Contains(r.stdout, tok.RefreshToken) {
		t.Fatalf("ferry auth status: %s", r.stdout)
	}

	// No secret in a trace, on stderr or in the trace file.
	traceFile := filepath.Join(t.TempDir(), "trace.ndjson")
	r = o.mustRun(t, 0, "", "--config", o.config, "-v", "--trace", "--trace-file", traceFile, "call", "srv.whoami")
	trace, _ := os.ReadFile(traceFile)
	for _, secret := range []string{tok.AccessToken, tok.RefreshToken} {
		if strings.Contains(r.stderr+r.stdout+string(trace), secret) {
			t.Fatal("a token appears in the trace")
		}
	}

	// A refresh: the expired token is refreshed with a real server's
	// rotation, and the new one stored.
	o.expire(t)
	ferry(0, "call", "srv.whoami")
	after := o.record(t).Token
	if after.AccessToken == tok.AccessToken || after.RefreshToken == tok.RefreshToken || after.RefreshToken == "" {
		t.Fatal("the expired token was not refreshed and rotated")
	}

	// Two processes refreshing at once: oidc-provider revokes the grant
	// when a refresh token is used twice, so both succeeding, and the
	// stored token refreshing once more afterwards, shows it was spent
	// once.
	for round := range 3 {
		o.expire(t)
		var wg sync.WaitGroup
		results := make([]result, 6)
		for i := range results {
			wg.Go(func() { results[i] = o.run(t, "", "--config", o.config, "--format", "json", "call", "srv.whoami") })
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("round %d, process %d: exit %d: %s", round, i, r.code, r.stderr)
			}
		}
	}
	o.expire(t)
	ferry(0, "call", "srv.whoami")

	// Logout: the token is gone, the registration (and its port) kept.
	ferry(0, "logout", "srv")
	ferry(exitAuthCode, "call", "srv.whoami")
	if rec := o.record(t); rec.Token != nil || rec.Clients[issuer] == nil {
		t.Fatalf("after logout: %+v", rec)
	}

	// A login the user refuses: exit code 3, nothing stored.
	deny := newBrowser("alice", "any")
	deny.deny = true
	if r := o.ferryLogin(t, deny, "--config", o.config, "login", "srv", "--scope", "mcp:write"); r.code != exitAuthCode {
		t.Fatalf("refused login: exit %d: %s", r.code, r.stderr)
	}

	// Logged in again with the scope the tool needs: the same client and
	// redirect port as the first time.
	r = o.ferryLogin(t, newBrowser("alice", "any"), "--config", o.config, "login", "srv", "--scope", "mcp:read", "--scope", "mcp:write")
	if r.code != 0 {
		t.Fatalf("second login: %d %s", r.code, r.stderr)
	}
	if rec2 := o.record(t); rec2.Clients[issuer].ClientID != rec.Clients[issuer].ClientID || rec2.Clients[issuer].RedirectURI != rec.Clients[issuer].RedirectURI {
		t.Fatalf("a new client or port for the second login: %v then %v", rec.Clients[issuer], rec2.Clients[issuer])
	}
	ferry(0, "call", "srv.write")
}

// exitAuthCode is ferry's exit code for refused authorization.
const exitAuthCode = 3

// TestOAuthStepUpLibrary: an auth.Authorizer (the library, as an
// application embeds it) logs in with oidc-provider, then a tool call
// refused with 403 insufficient_scope makes it authorize again with the
// scopes it had and the one asked, and the call goes through.
func TestOAuthStepUpLibrary(t *testing.T) {
	issuer := startOIDCProvider(t)
	server := protectedServer(t, issuer, &resourceserver.JWT{Issuer: issuer}, []string{"mcp:read"})
	b := newBrowser("bob", "any")
	var asked []string
	a := &auth.Authorizer{Server: server, Grant: &auth.AuthorizationCode{
		Authorize: func(ctx context.Context, authURL, redirect string) (url.Values, error) {
			u, _ := url.Parse(authURL)
			asked = append(asked, u.Query().Get("scope"))
			back, err := url.Parse(b.authorize(t, authURL, redirect))
			if err != nil {
				return nil, err
			}
			return back.Query(), nil
		},
	}}
	ctx := t.Context()
	c, err := client.Connect(ctx, &streamable.Transport{URL: server, Client: &http.Client{Transport: a.RoundTripper(nil)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "whoami", nil)
	if err != nil || !strings.HasPrefix(res.Content[0].Text, "bob mcp:read") {
		t.Fatalf("whoami: %v, %v", res, err)
	}
	res, err = c.Call(ctx, "write", nil)
	if err != nil || res.Content[0].Text != "written" {
		t.Fatalf("write after the step-up: %v, %v", res, err)
	}
	if len(asked) != 2 || !strings.Contains(asked[1], "mcp:read") || !strings.Contains(asked[1], "mcp:write") {
		t.Fatalf("scopes asked: %q; want a second authorization with mcp:read and mcp:write", asked)
	}
	res, err = c.Call(ctx, "whoami", nil)
	if err != nil || !strings.Contains(res.Content[0].Text, "mcp:write") {
		t.Fatalf("whoami after the step-up: %v, %v", res, err)
	}
}

// TestOAuthZitadel: ferry login against an OpenID-only provider (no RFC
// 8414 document: discovery falls back to OpenID Connect; its issuer ends
// with a slash, kept as it is) with a client pre-registered in the
// configuration the way hosts write it, and a server that checks its
// opaque tokens by introspection.
func TestOAuthZitadel(t *testing.T) {
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	issuer := startZitadel(t, redirect)
	if !strings.HasSuffix(issuer, "/") {
		t.Fatalf("issuer %q: the test wants one with a trailing slash", issuer)
	}
	// The example provider ignores resource indicators: its tokens are
	// for the client they were issued to, and it answers an
	// introspection as active only to a client of the token's audience,
	// without naming the audience. The audience check is its, then.
	server := protectedServer(t, issuer, &resourceserver.Introspection{Issuer: issuer, ClientID: "web", ClientSecret: "secret", AllowMissingAudience: true}, nil)
	o := newOAuthEnv(t, server, fmt.Sprintf(`,"oauth":{"clientId":"web","clientSecret":"secret","redirectUri":%q,"scopes":"openid"}`, redirect))
	r := o.ferryLogin(t, newBrowser("test-user@localhost", "verysecure"), "--config", o.config, "login", "srv")
	if r.code != 0 {
		t.Fatalf("ferry login: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if tok := o.record(t).Token; tok.Issuer != issuer || tok.ClientID != "web" {
		t.Fatalf("stored %v, client %s", tok, tok.ClientID)
	}
	if r := o.mustRun(t, 0, "", "--config", o.config, "--format", "json", "call", "srv.whoami"); !strings.Contains(r.stdout, "openid") {
		t.Fatalf("ferry call: %s", r.stdout)
	}
	o.expire(t)
	o.mustRun(t, 0, "", "--config", o.config, "--format", "json", "call", "srv.whoami")
}
