package interop

// `ferry serve` reaching an OAuth-protected server with credentials of
// its own (issue 34, the upstream's identity): the gateway's client at
// the identity provider (oidc-provider, testdata/oidc-policy.mjs) gets
// tokens by the client credentials grant for the server's resource; the
// server (ferry's, behind auth/resourceserver, verifying that provider's
// JWTs) sees the gateway's client as its caller. A token the server stops
// accepting is replaced without a call failing: the refusal brings one
// new token, however many calls it refused at once.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// revocable is a resource server's Verifier whose tokens can be revoked,
// as an authorization server's revocation would reach it; it records the
// tokens it was shown.
type revocable struct {
	resourceserver.Verifier
	mu      sync.Mutex
	seen    map[string]bool
	revoked map[string]bool
}

func (v *revocable) Verify(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	v.mu.Lock()
	v.seen[token] = true
	revoked := v.revoked[token]
	v.mu.Unlock()
	if revoked {
		return nil, fmt.Errorf("the token was revoked: %w", resourceserver.ErrInvalidToken)
	}
	return v.Verifier.Verify(ctx, token, audience)
}

// revokeAll revokes every token seen, and returns how many there were.
func (v *revocable) revokeAll() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	for tok := range v.seen {
		v.revoked[tok] = true
	}
	return len(v.seen)
}

func (v *revocable) tokens() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make([]string, 0, len(v.seen))
	for tok := range v.seen {
		out = append(out, tok)
	}
	return out
}

// startServe runs `ferry serve` with the configuration cfg and the
// environment variables env until the test ends, and returns it once
// ready.
func startServe(t *testing.T, cfg map[string]any, env ...string) *policyGateway {
	t.Helper()
	bin := ferryBinary(t)
	port := freePort(t)
	g := &policyGateway{url: fmt.Sprintf("http://127.0.0.1:%d", port), cfg: filepath.Join(t.TempDir(), "ferry.json"), stderr: &syncBuffer{}}
	g.write(t, cfg)
	g.cmd = exec.Command(bin, "serve", "--config", g.cfg, "--addr", fmt.Sprintf("127.0.0.1:%d", port))
	g.cmd.Env = append(os.Environ(), env...)
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.cmd.Process.Signal(os.Interrupt)
		g.cmd.Wait()
		if t.Failed() {
			t.Logf("ferry serve's stderr:\n%s", g.stderr.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(g.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("ferry serve did not get ready:\n%s", g.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// whoami calls the protected server's whoami through the gateway.
func whoami(ctx context.Context, c *client.Client) (string, error) {
	res, err := c.Call(ctx, "up__whoami", nil)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("whoami: %+v", res)
	}
	return res.Content[0].Text, nil
}

// TestGatewayUpstreamClientCredentials: ferry serve obtains its own
// token from a real authorization server for the server behind it, and
// replaces a revoked one without dropping a call.
func TestGatewayUpstreamClientCredentials(t *testing.T) {
	requireNode(t)
	nodePackageBin(t, "oidc-provider", "lib/index.js")
	script, _ := filepath.Abs(filepath.Join("testdata", "oidc-policy.mjs"))
	issuer := startReady(t, "oidc-provider", exec.Command(nodeBin, script, nodeModules, fmt.Sprint(freePort(t))))
	v := &revocable{Verifier: &resourceserver.JWT{Issuer: issuer}, seen: map[string]bool{}, revoked: map[string]bool{}}
	upstream := protectedServer(t, issuer, v, []string{"mcp:read"})

	const secret = "alice-secret"
	g := startServe(t, map[string]any{"mcpServers": map[string]any{"up": map[string]any{
		"url":   upstream,
		"oauth": map[string]any{"clientId": "alice-app", "clientSecret": "${UP_CLIENT_SECRET}", "grant": "client_credentials"},
	}}}, "UP_CLIENT_SECRET="+secret)
	ctx := context.Background()
	for _, version := range []string{protocol.LatestVersion, protocol.LatestLegacyVersion} {
		c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/mcp"}, &client.Options{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		who, err := whoami(ctx, c)
		if err != nil || !strings.HasPrefix(who, "alice-app ") {
			t.Fatalf("%s: whoami: %q, %v; want the gateway's client, alice-app", version, who, err)
		}
	}

	// The server stops accepting the token: the calls it refuses at once
	// are sent again with one new token, and none fails.
	before := v.revokeAll()
	c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if who, err := whoami(ctx, c); err != nil || !strings.HasPrefix(who, "alice-app ") {
				t.Errorf("after the revocation: whoami: %q, %v", who, err)
			}
		})
	}
	wg.Wait()
	if after := len(v.tokens()); after != before+1 {
		t.Fatalf("the server saw %d tokens after the revocation, %d before: want exactly one new one", after, before)
	}

	// No secret in the gateway's log, nor in its command line.
	logs := g.stderr.String()
	for _, s := range append(v.tokens(), secret) {
		if strings.Contains(logs, s) {
			t.Fatalf("the gateway's log holds a secret:\n%s", logs)
		}
	}
	if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", g.cmd.Process.Pid)); strings.Contains(string(cmdline), secret) {
		t.Fatal("the client secret is in the process list")
	}
}

// zitadelUserToken logs test-user@localhost in at zitadel's example
// provider (the authorization code grant, client "web", the browser
// filling in the login form) and returns the user's access token.
func zitadelUserToken(t *testing.T, issuer, redirect string) string {
	t.Helper()
	var meta struct {
		Authorization string `json:"authorization_endpoint"`
		Token         string `json:"token_endpoint"`
	}
	getJSON(t, issuer+".well-known/openid-configuration", &meta)
	q := url.Values{"client_id": {"web"}, "response_type": {"code"}, "redirect_uri": {redirect}, "scope": {"openid"}, "state": {"s"}}
	back, err := url.Parse(newBrowser("test-user@localhost", "verysecure").authorize(t, meta.Authorization+"?"+q.Encode(), redirect))
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {redirect}}
	req, _ := http.NewRequest("POST", meta.Token, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("web", "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("the user's token: %s, %v", resp.Status, err)
	}
	return tok.AccessToken
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

// TestUpstreamTokenExchangeZitadel: an Exchanger acts for a user at a
// server with a token zitadel's provider issues in exchange for the
// user's (RFC 8693), never the user's own; a request without a user's
// token goes through the fallback, here without a token: zitadel's
// example issues client credentials tokens its introspection does not
// take (their subject is no user).
func TestUpstreamTokenExchangeZitadel(t *testing.T) {
	port := freePort(t)
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", port)
	issuer := startZitadel(t, redirect)
	// The server is known to the provider as its client "api": its
	// introspection takes the tokens whose audience names it.
	v := &revocable{Verifier: &resourceserver.Introspection{Issuer: issuer, ClientID: "api", ClientSecret: "secret", AllowMissingAudience: true},
		seen: map[string]bool{}, revoked: map[string]bool{}}
	upstream := protectedServer(t, issuer, v, nil)
	user := zitadelUserToken(t, issuer, redirect)

	x := &auth.Exchanger{Server: upstream, ClientID: "sid1", ClientSecret: "verysecret", Audience: "api", Scopes: []string{"openid"}}
	hc := &http.Client{Transport: x.RoundTripper(nil, nil)}
	asUser := auth.WithSubjectToken(context.Background(), user)
	tr := &streamable.Transport{URL: upstream, Client: hc}
	if _, err := client.Connect(context.Background(), tr, &client.Options{ProtocolVersion: protocol.LatestVersion}); err == nil {
		t.Fatal("connected without a user's token nor one of the client's own")
	}
	c, err := client.Connect(asUser, tr, &client.Options{ProtocolVersion: protocol.LatestVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func(ctx context.Context) string {
		t.Helper()
		res, err := c.Call(ctx, "whoami", nil)
		if err != nil || len(res.Content) != 1 {
			t.Fatalf("whoami: %+v, %v", res, err)
		}
		return res.Content[0].Text
	}
	if who := call(asUser); !strings.HasPrefix(who, "id1") {
		t.Fatalf("for the user: whoami %q, want the user, id1", who)
	}
	if v.seen[user] {
		t.Fatal("the user's own token reached the server")
	}
	// The exchanged token revoked: one new exchange, the call goes on.
	n := v.revokeAll()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if who := call(asUser); !strings.HasPrefix(who, "id1") {
				t.Errorf("after the revocation: whoami %q", who)
			}
		})
	}
	wg.Wait()
	if got := len(v.tokens()); got != n+1 {
		t.Fatalf("%d tokens seen after the revocation, %d before: want one new", got, n)
	}
	if v.seen[user] {
		t.Fatal("the user's own token reached the server")
	}
}

// TestGatewayUpstreamLoginGrant: the token `ferry login` stored for a
// server is what ferry serve sends it; a token the server stops
// accepting is refreshed once (oidc-provider rotates refresh tokens and
// revokes the grant of one used twice) for every call it refused, and no
// call fails.
func TestGatewayUpstreamLoginGrant(t *testing.T) {
	issuer := startOIDCProvider(t)
	v := &revocable{Verifier: &resourceserver.JWT{Issuer: issuer}, seen: map[string]bool{}, revoked: map[string]bool{}}
	upstream := protectedServer(t, issuer, v, []string{"mcp:read"})
	o := newOAuthEnv(t, upstream, "")
	if r := o.ferryLogin(t, newBrowser("alice", "any"), "--config", o.config, "login", "srv"); r.code != 0 {
		t.Fatalf("ferry login: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var env []string
	for k, val := range o.env {
		env = append(env, k+"="+val)
	}
	g := startServe(t, map[string]any{"mcpServers": map[string]any{"up": map[string]any{"type": "http", "url": upstream}}}, env...)
	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if who, err := whoami(ctx, c); err != nil || !strings.HasPrefix(who, "alice ") {
		t.Fatalf("whoami: %q, %v; want the user who logged in, alice", who, err)
	}
	before := v.revokeAll()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if who, err := whoami(ctx, c); err != nil || !strings.HasPrefix(who, "alice ") {
				t.Errorf("after the revocation: whoami: %q, %v", who, err)
			}
		})
	}
	wg.Wait()
	if after := len(v.tokens()); after != before+1 {
		t.Fatalf("the server saw %d tokens after the revocation, %d before: want one refresh", after, before)
	}
	if who, err := whoami(ctx, c); err != nil || !strings.HasPrefix(who, "alice ") {
		t.Fatalf("after the refresh: whoami: %q, %v", who, err)
	}
	rec := o.record(t)
	for _, s := range append(v.tokens(), rec.Token.RefreshToken) {
		if strings.Contains(g.stderr.String(), s) {
			t.Fatal("a token is in the gateway's log")
		}
	}
}
