package interop

// `ferry serve`'s policy (issue 34): identities from a real identity
// provider (oidc-provider, testdata/oidc-policy.mjs, whose client
// credentials tokens carry a "roles" claim) or from a token file with
// callers and roles; access rules that filter the lists and refuse calls
// on /mcp and /servers/NAME/mcp; the 403 insufficient_scope challenge; an
// audit record per call without a secret in it; SIGHUP reloading the
// rules whole or not at all, sessions kept. The server behind is
// @modelcontextprotocol/server-everything.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// policyRules are the access rules of the tests: admins use every tool,
// everyone echoes, readers add numbers with the mcp:write scope, and
// nobody reads the server's environment.
var policyRules = map[string]any{"rules": []any{
	map[string]any{"description": "admins use everything", "allow": map[string]any{"roles": []string{"admin"}}, "tools": []string{"*"}},
	map[string]any{"description": "everyone echoes", "allow": map[string]any{}, "tools": []string{"everything__echo"}},
	map[string]any{"description": "readers add with mcp:write", "allow": map[string]any{"roles": []string{"reader"}, "scopes": []string{"mcp:write"}}, "tools": []string{"everything__get-sum"}},
	map[string]any{"description": "the environment holds secrets", "deny": map[string]any{}, "tools": []string{"everything__get-env"}},
}}

// policyGateway is a running `ferry serve` with a policy.
type policyGateway struct {
	url    string // http://127.0.0.1:PORT
	cfg    string // its configuration file
	audit  string // its audit file
	cmd    *exec.Cmd
	stderr *syncBuffer
}

// startPolicyGateway writes a configuration of server-everything and the
// given sections, and runs `ferry serve` on port with it and args until
// the test ends.
func startPolicyGateway(t *testing.T, port int, sections map[string]any, args ...string) *policyGateway {
	t.Helper()
	bin := ferryBinary(t)
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	dir := t.TempDir()
	g := &policyGateway{url: fmt.Sprintf("http://127.0.0.1:%d", port), cfg: filepath.Join(dir, "ferry.json"),
		audit: filepath.Join(dir, "audit.jsonl"), stderr: &syncBuffer{}}
	sections["mcpServers"] = map[string]any{"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}}
	sections["audit"] = map[string]any{"file": g.audit}
	g.write(t, sections)
	g.cmd = exec.Command(bin, append([]string{"serve", "--config", g.cfg, "--addr", fmt.Sprintf("127.0.0.1:%d", port)}, args...)...)
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- g.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			g.cmd.Process.Kill()
			<-done
			t.Error("ferry serve did not stop within 30s of SIGINT")
		}
		if t.Failed() {
			t.Logf("ferry serve's stderr:\n%s", g.stderr.String())
		}
	})
	deadline := time.Now().Add(90 * time.Second)
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

func (g *policyGateway) write(t *testing.T, sections map[string]any) {
	t.Helper()
	data, _ := json.MarshalIndent(sections, "", "  ")
	if err := os.WriteFile(g.cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// reload sends SIGHUP and waits for the gateway to log the outcome,
// which it returns: the line of the refusal, or "" once it is read.
func (g *policyGateway) reload(t *testing.T) string {
	t.Helper()
	before := strings.Count(g.stderr.String(), "SIGHUP")
	g.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(g.stderr.String(), "SIGHUP") == before {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP was not logged")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, line := range strings.Split(g.stderr.String(), "\n") {
		if strings.Contains(line, "SIGHUP: the configuration is refused") {
			return line
		}
	}
	return ""
}

// records reads the audit file.
func (g *policyGateway) records(t *testing.T) (raw string, recs []map[string]any) {
	t.Helper()
	data, err := os.ReadFile(g.audit)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return string(data), recs
}

// clientToken gets an access token for resource by the client
// credentials grant.
func clientToken(t *testing.T, issuer, id, secret, scope, resource string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, issuer+"/token", strings.NewReader(url.Values{
		"grant_type": {"client_credentials"}, "scope": {scope}, "resource": {resource}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &out); err != nil || out.AccessToken == "" {
		t.Fatalf("token for %s: %d %s", id, resp.StatusCode, body)
	}
	return out.AccessToken
}

// policyClient connects to endpoint with a bearer token.
func policyClient(t *testing.T, endpoint, token, version string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &streamable.Transport{URL: endpoint, Header: http.Header{"Authorization": {"Bearer " + token}}},
		&client.Options{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", endpoint, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func listTools(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// refusedBy checks that err is the access rules' refusal naming want.
func refusedBy(t *testing.T, err error, want string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(rpc.Message, want) {
		t.Fatalf("error %v, want -32600 saying %q", err, want)
	}
}

// statelessCall posts a stateless tools/call of tool with token and
// returns the HTTP answer.
func statelessCall(t *testing.T, endpoint, token, tool string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"a":1,"b":2},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestGatewayPolicyOIDC: callers with oidc-provider's JWTs, an admin and
// a reader, see different tools on /mcp, /servers/everything/mcp and a
// view in both eras; a denied call names its rule; a call a scope would allow is
// a 403 insufficient_scope; every call is audited with no token in the
// audit file nor the log; SIGHUP refuses a bad configuration whole and
// takes a good one, the sessions kept.
func TestGatewayPolicyOIDC(t *testing.T) {
	requireNode(t)
	nodePackageBin(t, "oidc-provider", "lib/index.js")
	script, _ := filepath.Abs(filepath.Join("testdata", "oidc-policy.mjs"))
	issuer := startReady(t, "oidc-provider", exec.Command(nodeBin, script, nodeModules, fmt.Sprint(freePort(t))))
	port := freePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	identity := map[string]any{"issuer": issuer, "resource": resource, "scopes": []string{"mcp:read"}}
	views := map[string]any{"ops": map[string]any{"tools": map[string]any{
		"everything__echo": map[string]any{"name": "say"}, "everything__get-sum": map[string]any{"name": "sum"}, "everything__get-env": map[string]any{}}}}
	g := startPolicyGateway(t, port, map[string]any{"identity": identity, "access": policyRules, "views": views})

	// The Protected Resource Metadata names the identity provider.
	resp, err := http.Get(g.url + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	meta, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(meta), issuer) {
		t.Fatalf("metadata: %d %s", resp.StatusCode, meta)
	}

	alice := clientToken(t, issuer, "alice-app", "alice-secret", "mcp:read mcp:write", resource)
	bob := clientToken(t, issuer, "bob-app", "bob-secret", "mcp:read", resource)
	ctx := context.Background()
	bobSession := policyClient(t, g.url+"/mcp", bob, protocol.LatestLegacyVersion) // kept across the reloads
	for _, version := range []string{protocol.LatestLegacyVersion, protocol.Version20260728} {
		t.Run(version, func(t *testing.T) {
			a := policyClient(t, g.url+"/mcp", alice, version)
			b := policyClient(t, g.url+"/mcp", bob, version)
			aliceTools, bobTools := listTools(t, a), listTools(t, b)
			if !slices.Contains(aliceTools, "everything__get-sum") || slices.Contains(aliceTools, "everything__get-env") || len(aliceTools) < 5 {
				t.Errorf("alice (admin) sees %v: want every tool but get-env", aliceTools)
			}
			if !slices.Equal(bobTools, []string{"everything__echo"}) {
				t.Errorf("bob (reader, no mcp:write) sees %v, want everything__echo only", bobTools)
			}
			if own := listTools(t, policyClient(t, g.url+"/servers/everything/mcp", bob, version)); !slices.Equal(own, []string{"echo"}) {
				t.Errorf("bob sees %v on /servers/everything/mcp, want echo only", own)
			}
			if view := listTools(t, policyClient(t, g.url+"/views/ops/mcp", alice, version)); !slices.Equal(view, []string{"say", "sum"}) {
				t.Errorf("alice sees %v on the view, want say and sum (get-env denied)", view)
			}
			if view := listTools(t, policyClient(t, g.url+"/views/ops/mcp", bob, version)); !slices.Equal(view, []string{"say"}) {
				t.Errorf("bob sees %v on the view, want say", view)
			}
			if _, err := b.Call(ctx, "everything__echo", map[string]string{"message": "hi"}); err != nil {
				t.Fatalf("bob's echo: %v", err)
			}
			_, err := a.Call(ctx, "everything__get-env", nil)
			refusedBy(t, err, `access rule 3 (the environment holds secrets) refuses tools/call of "everything__get-env"`)
		})
	}

	// A scope would allow bob's get-sum: 403, the challenge naming it.
	resp = statelessCall(t, g.url+"/mcp", bob, "everything__get-sum")
	ch := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="mcp:read mcp:write"`) {
		t.Fatalf("bob's get-sum: %d %q", resp.StatusCode, ch)
	}
	if resp := statelessCall(t, g.url+"/mcp", alice, "everything__get-sum"); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's get-sum: %d", resp.StatusCode)
	}

	raw, recs := g.records(t)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprint(r["caller"], " ", r["server"], " ", r["name"], " ", r["outcome"], " ", r["refused_by"]))
		if r["issuer"] != issuer || r["time"] == nil || r["ms"] == nil || r["refused_by"] == "insufficient_scope" && r["http_status"] != 403.0 {
			t.Errorf("record %v: no issuer, time or ms", r)
		}
	}
	want := []string{"bob-app everything everything__echo ok <nil>", "alice-app everything everything__get-env refused rule 3"}
	want = append(append(want, want...), "bob-app <nil> everything__get-sum refused insufficient_scope", "alice-app everything everything__get-sum ok <nil>")
	if !slices.Equal(got, want) {
		t.Errorf("audit records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, tok := range []string{alice, bob, "alice-secret", "bob-secret"} {
		if strings.Contains(raw, tok) || strings.Contains(g.stderr.String(), tok) {
			t.Fatalf("a secret reached the audit file or the log")
		}
	}

	// SIGHUP: a configuration with a bad rule is refused whole, naming
	// the field; a good one is taken, bob's session kept.
	bad := map[string]any{"rules": []any{map[string]any{"allow": map[string]any{}, "deny": map[string]any{}, "tools": []string{"*"}}}}
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	servers := map[string]any{"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}}
	g.write(t, map[string]any{"mcpServers": servers, "identity": identity, "audit": map[string]any{"file": g.audit}, "access": bad, "views": views})
	if line := g.reload(t); !strings.Contains(line, `access.rules[0]: has both \"allow\" and \"deny\"`) {
		t.Fatalf("a bad configuration's reload logged %q", line)
	}
	if tools := listTools(t, bobSession); !slices.Equal(tools, []string{"everything__echo"}) {
		t.Fatalf("after a refused reload bob sees %v", tools)
	}
	good := map[string]any{"default": "deny", "rules": []any{
		map[string]any{"allow": map[string]any{"roles": []string{"reader"}}, "tools": []string{"everything__echo", "everything__get-sum"}}}}
	g.write(t, map[string]any{"mcpServers": servers, "identity": identity, "audit": map[string]any{"file": g.audit}, "access": good, "views": views})
	before := strings.Count(g.stderr.String(), "configuration is refused")
	g.reload(t)
	if after := strings.Count(g.stderr.String(), "configuration is refused"); after != before {
		t.Fatalf("a good configuration was refused:\n%s", g.stderr.String())
	}
	if tools := listTools(t, bobSession); !slices.Equal(tools, []string{"everything__echo", "everything__get-sum"}) {
		t.Fatalf("after the reload bob's session sees %v", tools)
	}
}

// TestGatewayPolicyTokenFile: a token file's lines name callers and their
// roles; the rules and the audit records go by them, never the tokens.
func TestGatewayPolicyTokenFile(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.txt")
	const aliceTok, bobTok, bareTok = "tok-alice-0d9c5e1f", "tok-bob-77a1b2c3", "tok-bare-5e6f7a8b"
	os.WriteFile(tokens, []byte("# token caller roles\n"+aliceTok+" alice admin\n"+bobTok+" bob reader\n"+bareTok+"\n"), 0o600)
	g := startPolicyGateway(t, freePort(t), map[string]any{"access": policyRules}, "--token-file", tokens)
	ctx := context.Background()
	a := policyClient(t, g.url+"/mcp", aliceTok, protocol.LatestLegacyVersion)
	b := policyClient(t, g.url+"/mcp", bobTok, protocol.Version20260728)
	bare := policyClient(t, g.url+"/mcp", bareTok, protocol.LatestLegacyVersion)
	if tools := listTools(t, a); !slices.Contains(tools, "everything__get-sum") || slices.Contains(tools, "everything__get-env") {
		t.Errorf("alice (admin) sees %v", tools)
	}
	for who, c := range map[string]*client.Client{"bob": b, "bare": bare} {
		if tools := listTools(t, c); !slices.Equal(tools, []string{"everything__echo"}) {
			t.Errorf("%s sees %v", who, tools)
		}
	}
	_, err := b.Call(ctx, "everything__get-sum", map[string]int{"a": 1, "b": 2})
	refusedBy(t, err, "insufficient_scope") // a token file grants no scopes
	if _, err := bare.Call(ctx, "everything__echo", map[string]string{"message": "hi"}); err != nil {
		t.Fatal(err)
	}
	raw, recs := g.records(t)
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprint(r["caller"], " ", r["name"], " ", r["outcome"]))
	}
	if len(got) != 2 || got[0] != "bob everything__get-sum refused" || !strings.HasPrefix(got[1], "token-sha256:") || !strings.HasSuffix(got[1], " everything__echo ok") {
		t.Errorf("audit records %q", got)
	}
	for _, tok := range []string{aliceTok, bobTok, bareTok} {
		if strings.Contains(raw, tok) || strings.Contains(g.stderr.String(), tok) {
			t.Fatalf("token %s reached the audit file or the log", tok)
		}
	}
}
