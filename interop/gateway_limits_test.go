package interop

// `ferry serve`'s limits (issue 34, item 4), with server-everything
// behind it and callers named by a token file: a tool's rate per caller
// hit (a JSON-RPC error saying when to retry) and recovered once that
// time has passed; a caller's request rate refused with HTTP 429 and
// Retry-After before the body is read; the same limit shared by two
// replicas through a real redis-server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// limitedPost sends a body that is no JSON-RPC at all to endpoint as
// token's caller: a gateway that reads it answers 400; a limit refuses it
// with 429 before.
func limitedPost(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader("not JSON"))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

func TestGatewayLimits(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.txt")
	const aliceTok, daveTok, bobTok, carolTok = "tok-alice-4c1d", "tok-dave-5b0e", "tok-bob-8e2f", "tok-carol-1a7b"
	os.WriteFile(tokens, []byte(aliceTok+" alice\n"+daveTok+" dave\n"+bobTok+" bob\n"+carolTok+" carol\n"), 0o600)
	limits := map[string]any{"rules": []any{
		map[string]any{"name": "echo rate", "tools": []string{"everything__echo"}, "per": []string{"caller", "tool"}, "rate": "1/s", "burst": 2},
		map[string]any{"name": "carol's requests", "callers": []string{"carol"}, "rate": "3/h"},
	}}
	g := startPolicyGateway(t, freePort(t), map[string]any{"limits": limits}, "--token-file", tokens)
	ctx := context.Background()
	echo := func(token, version string) error {
		_, err := policyClient(t, g.url+"/mcp", token, version).Call(ctx, "everything__echo", map[string]any{"message": "hi"})
		return err
	}
	// Alice calls in the stateless era, dave in a legacy session.
	for version, tok := range map[string]string{protocol.Version20260728: aliceTok, protocol.LatestLegacyVersion: daveTok} {
		t.Run(version, func(t *testing.T) {
			for i := range 2 {
				if err := echo(tok, version); err != nil {
					t.Fatalf("echo %d: %v", i, err)
				}
			}
			err := echo(tok, version)
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != -32029 || !strings.Contains(je.Message, `"echo rate"`) {
				t.Fatalf("the third echo: %v, want the limit's -32029 naming it", err)
			}
			var data struct {
				Limit        string `json:"limit"`
				RetryAfter   int    `json:"retryAfter"`
				RetryAfterMs int    `json:"retryAfterMs"`
			}
			if err := json.Unmarshal(je.Data, &data); err != nil || data.Limit != "echo rate" || data.RetryAfter != 1 || data.RetryAfterMs <= 0 || data.RetryAfterMs > 1000 {
				t.Fatalf("the error's data %s: %v", je.Data, err)
			}
			if err := echo(bobTok, version); err != nil {
				t.Fatalf("bob's echo, counted apart: %v", err)
			}
			// Retry when told: the limit lets the call through.
			time.Sleep(time.Duration(data.RetryAfterMs) * time.Millisecond)
			if err := echo(tok, version); err != nil {
				t.Fatalf("the echo after the wait it was told: %v", err)
			}
		})
	}

	// Carol's fourth request is refused at the door.
	for i := range 3 {
		if status, _ := limitedPost(t, g.url+"/mcp", carolTok); status != http.StatusBadRequest {
			t.Fatalf("carol's request %d: %d, want 400 (read, and not JSON-RPC)", i, status)
		}
	}
	status, retry := limitedPost(t, g.url+"/mcp", carolTok)
	if s, err := strconv.Atoi(retry); status != http.StatusTooManyRequests || err != nil || s < 1000 || s > 1200 {
		t.Fatalf("carol's fourth request: %d, Retry-After %q; want 429 and about 1200 seconds", status, retry)
	}
	if status, _ := limitedPost(t, g.url+"/mcp", aliceTok); status != http.StatusBadRequest {
		t.Fatalf("alice's request: %d, want 400: the rule names carol", status)
	}
	// SIGHUP: a configuration whose limits do not compile is refused
	// whole; one without carol's rule frees her at once.
	bad := map[string]any{"rules": []any{map[string]any{"rate": "ten/s"}}}
	g.write(t, map[string]any{"mcpServers": everythingEntry(t), "audit": map[string]any{"file": g.audit}, "limits": bad})
	if line := g.reload(t); !strings.Contains(line, "limits.rules[0].rate") {
		t.Fatalf("a bad rate was not refused by name: %q", line)
	}
	if status, _ := limitedPost(t, g.url+"/mcp", carolTok); status != http.StatusTooManyRequests {
		t.Fatalf("after a refused reload carol's request: %d, want 429 still", status)
	}
	limits["rules"] = limits["rules"].([]any)[:1]
	g.write(t, map[string]any{"mcpServers": everythingEntry(t), "audit": map[string]any{"file": g.audit}, "limits": limits})
	g.reload(t) // its answer is the earlier refusal's line, still in the log
	if n := strings.Count(g.stderr.String(), "the configuration is refused"); n != 1 {
		t.Fatalf("%d refusals logged, want the one of the bad configuration", n)
	}
	if status, _ := limitedPost(t, g.url+"/mcp", carolTok); status != http.StatusBadRequest {
		t.Fatalf("after the reload carol's request: %d, want 400: her rule is gone", status)
	}

	for _, s := range []string{aliceTok, daveTok, bobTok, carolTok} {
		if strings.Contains(g.stderr.String(), s) {
			t.Fatal("a token is in the gateway's log")
		}
	}
}

// everythingEntry is the server entry of startPolicyGateway.
func everythingEntry(t *testing.T) map[string]any {
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	return map[string]any{"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}}
}

// TestGatewayLimitsShared: two replicas count against one Redis: what one
// let through, the other refuses.
func TestGatewayLimitsShared(t *testing.T) {
	needBinaries(t, "redis-server")
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	daemon(t, exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir))
	waitFor(t, "redis-server", func() bool { _, err := os.Stat(sock); return err == nil })
	tokens := filepath.Join(dir, "tokens.txt")
	const aliceTok, bobTok = "tok-alice-93fe", "tok-bob-2d4c"
	os.WriteFile(tokens, []byte(aliceTok+" alice\n"+bobTok+" bob\n"), 0o600)
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	cfg := filepath.Join(dir, "ferry.json")
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}},
		"limits": map[string]any{"rules": []any{
			map[string]any{"callers": []string{"alice"}, "per": []string{"caller"}, "rate": "2/h"},
			map[string]any{"name": "one at a time", "callers": []string{"bob"}, "per": []string{"caller"}, "concurrency": 1},
		}},
	})
	os.WriteFile(cfg, data, 0o600)
	bin := ferryBinary(t)
	_, a := replica(t, bin, cfg, "unix://"+sock, "--token-file", tokens)
	_, b := replica(t, bin, cfg, "unix://"+sock, "--token-file", tokens)
	got := []int{}
	for _, u := range []string{a, b, a, b} {
		status, _ := limitedPost(t, u+"/mcp", aliceTok)
		got = append(got, status)
	}
	if fmt.Sprint(got) != "[400 400 429 429]" {
		t.Fatalf("alice's requests to a, b, a, b: %v; want two let through and two refused, whichever replica", got)
	}

	// Bob's call in flight on a holds his one place on b too.
	ctx := context.Background()
	onA := policyClient(t, a+"/mcp", bobTok, protocol.Version20260728)
	onB := policyClient(t, b+"/mcp", bobTok, protocol.Version20260728)
	started := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		pctx := client.WithProgress(ctx, func(*protocol.ProgressParams) { once.Do(func() { close(started) }) })
		_, err := onA.Call(pctx, "everything__trigger-long-running-operation", map[string]any{"duration": 2, "steps": 2})
		done <- err
	}()
	select {
	case <-started: // the first progress: the call is in flight
	case err := <-done:
		t.Fatalf("the long call ended before its first progress: %v", err)
	}
	_, err := onB.Call(ctx, "everything__echo", map[string]any{"message": "hi"})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32029 || !strings.Contains(je.Message, "one at a time") {
		t.Fatalf("bob's echo on b while his call runs on a: %v, want -32029", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := onB.Call(ctx, "everything__echo", map[string]any{"message": "hi"}); err != nil {
		t.Fatalf("bob's echo on b once his call on a ended: %v", err)
	}
}
