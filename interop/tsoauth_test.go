package interop

// The TypeScript SDK's OAuth client (@modelcontextprotocol/sdk, pinned in
// node/package.json) against a ferry server protected by the resource
// server middleware, with oidc-provider as the authorization server:
// testdata/tsoauth.mjs is the application, this test its user's browser.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/auth/resourceserver"
)

func TestOAuthTSSDK(t *testing.T) {
	nodePackageBin(t, "@modelcontextprotocol/sdk", "dist/esm/client/auth.js")
	issuer := startOIDCProvider(t)
	server := protectedServer(t, issuer, &resourceserver.JWT{Issuer: issuer}, []string{"mcp:read"})
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", freePort(t))
	script, _ := filepath.Abs(filepath.Join("testdata", "tsoauth.mjs"))

	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, script, nodeModules, server, redirect)
	cmd.WaitDelay = 5 * time.Second
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()

	b := newBrowser("carol", "any")
	var asked []url.Values
	var summary string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var line struct {
			Authorize string `json:"authorize"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("tsoauth.mjs printed %q: %v", sc.Text(), err)
		}
		if line.Authorize == "" {
			summary = sc.Text()
			break
		}
		u, err := url.Parse(line.Authorize)
		if err != nil {
			t.Fatal(err)
		}
		asked = append(asked, u.Query())
		back := b.authorize(t, line.Authorize, redirect)
		if _, err := io.WriteString(stdin, back+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	if summary == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("tsoauth.mjs printed no summary\nstderr: %s", stderr.String())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("tsoauth.mjs: %v\nstderr: %s", err, stderr.String())
	}

	var got struct {
		Tools          []string `json:"tools"`
		Whoami         string   `json:"whoami"`
		Write          string   `json:"write"`
		WhoamiAfter    string   `json:"whoamiAfter"`
		Authorizations int      `json:"authorizations"`
		Reregistered   bool     `json:"reregistered"`
	}
	t.Logf("tsoauth.mjs: %s", summary)
	if err := json.Unmarshal([]byte(summary), &got); err != nil {
		t.Fatalf("summary %s: %v", summary, err)
	}
	if !reflect.DeepEqual(got.Tools, []string{"whoami", "write"}) || got.Whoami != "carol mcp:read" || got.Write != "written" ||
		!strings.HasPrefix(got.WhoamiAfter, "carol ") || !strings.Contains(got.WhoamiAfter, "mcp:write") || got.Authorizations != 3 || !got.Reregistered {
		t.Fatalf("summary: %s", summary)
	}
	// What the SDK asked of oidc-provider, read off the authorization
	// URLs: the resource exactly as the server's metadata publishes it,
	// PKCE S256, the scope of the 401 challenge, then the step-up's (the
	// scopes of the 403 challenge), refused by oidc-provider for the
	// client the SDK registered with the first scope, and asked again by
	// the client registered anew (tsoauth.mjs says why).
	want := []string{"mcp:read", "mcp:read mcp:write", "mcp:read mcp:write"}
	if len(asked) != len(want) {
		t.Fatalf("%d authorizations, want %d", len(asked), len(want))
	}
	for i, scope := range want {
		q := asked[i]
		if q.Get("resource") != server || q.Get("code_challenge_method") != "S256" || q.Get("scope") != scope || q.Get("redirect_uri") != redirect {
			t.Errorf("authorization %d asked %v; want resource %s, S256, scope %q", i+1, q, server, scope)
		}
	}
	if asked[1].Get("client_id") != asked[0].Get("client_id") || asked[2].Get("client_id") == asked[1].Get("client_id") {
		t.Errorf("client ids %q, %q, %q: want the first reused, then a new one", asked[0].Get("client_id"), asked[1].Get("client_id"), asked[2].Get("client_id"))
	}
}
