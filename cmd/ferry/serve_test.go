package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// buildFerry builds the command for the tests that run it as a process.
func buildFerry(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ferry")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServe runs ferry serve and returns its process and base URL.
func startServe(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case url := <-found:
		return cmd, url
	case <-time.After(20 * time.Second):
		t.Fatal("ferry serve did not say where it listens")
	}
	return nil, ""
}

// children returns the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", n))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func toolNames(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &streamable.Transport{URL: url + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names
}

// SIGHUP adds and removes servers; SIGTERM stops ferry serve and every
// server process with it.
func TestServeReloadsAndStops(t *testing.T) {
	bin := buildFerry(t)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	write := func(names ...string) {
		var entries []string
		for _, n := range names {
			entries = append(entries, fmt.Sprintf("%q: {\"command\": %q}", n, exampleServer))
		}
		if err := os.WriteFile(cfg, []byte(`{"mcpServers": {`+strings.Join(entries, ",")+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a")
	cmd, url := startServe(t, bin, nil, "--config", cfg)
	if names := toolNames(t, url); !slices.Contains(names, "a__add") {
		t.Fatalf("tools %v", names)
	}
	write("b", "c")
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(20 * time.Second)
	for {
		names := toolNames(t, url)
		if slices.Contains(names, "b__add") && slices.Contains(names, "c__add") && !slices.Contains(names, "a__add") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP, tools %v", names)
		}
		time.Sleep(100 * time.Millisecond)
	}
	kids := children(cmd.Process.Pid)
	if len(kids) != 2 {
		t.Errorf("%d server processes after the reload, want 2: %v", len(kids), kids)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ferry serve after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ferry serve did not stop")
	}
	for _, pid := range kids {
		if syscall.Kill(pid, 0) == nil {
			t.Errorf("server process %d outlived ferry serve", pid)
		}
	}
}

// Beyond loopback, ferry serve wants tokens or a loud opt-out.
func TestServeRefusesOpenAddressWithoutAuth(t *testing.T) {
	code, _, errOut := runFerry(t, "", "serve", "--addr", "0.0.0.0:0", "--", exampleServer)
	if code != exitUsage || !strings.Contains(errOut, "FERRY_GATEWAY_TOKENS") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// The gateway's own bearer tokens do not reach the servers it starts,
// even with --inherit-env: a server that read them could call the
// gateway as any of its clients.
func TestServeKeepsItsTokensFromServers(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "mark")
	_, url := startServe(t, ferryBin, []string{"FERRY_GATEWAY_TOKENS=sekrit-1,sekrit-2", "FERRY_TEST_MARK=" + mark},
		"--inherit-env", "--env", "FERRY_TEST_SERVER=stdio", "--", testBin)
	waitFor(t, "the server to start", fileHas(mark, "environment:"))
	if b, _ := os.ReadFile(mark); !strings.Contains(string(b), "FERRY_GATEWAY_TOKENS unset") {
		t.Errorf("the server saw the gateway's tokens: %s", b)
	}
	for token, want := range map[string]int{"": http.StatusUnauthorized, "sekrit-2": http.StatusOK} {
		req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize",`+
			`"params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: HTTP %d, want %d", token, resp.StatusCode, want)
		}
	}
}

// TestServeGivesServersNoSecrets: server-everything run by ferry serve,
// whose get-env tool shows its environment to any client, sees neither
// the gateway's OTLP headers nor a model API key from its environment:
// only what a program needs and what it is given (issue 29, finding 8;
// at b211c63 a client read both).
func TestServeGivesServersNoSecrets(t *testing.T) {
	ev := serverEverything(t)
	secrets := []string{"OPENAI_API_KEY=sk-gateway-secret", "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer otlp-secret"}
	_, url := startServe(t, ferryBin, append(secrets, "FERRY_TEST_GIVEN=given"),
		append([]string{"--env", "FERRY_TEST_GIVEN", "--env", "FERRY_TEST_SET=set", "--"}, ev...)...)
	code, out, errOut, _ := runBin(t, "--format", "json", "call", url+"/servers/server-everything/mcp", "get-env")
	var res struct{ Content []struct{ Text string } }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) != 1 {
		t.Fatalf("get-env: exit %d %s %s", code, out, errOut)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(res.Content[0].Text), &env); err != nil {
		t.Fatalf("get-env: %v: %s", err, res.Content[0].Text)
	}
	for _, kv := range secrets {
		name, _, _ := strings.Cut(kv, "=")
		if v, ok := env[name]; ok {
			t.Errorf("the server sees %s=%q", name, v)
		}
	}
	want := map[string]string{"PATH": os.Getenv("PATH"), "FERRY_TEST_GIVEN": "given", "FERRY_TEST_SET": "set"}
	for name, v := range want {
		if env[name] != v {
			t.Errorf("the server sees %s=%q, want %q", name, env[name], v)
		}
	}
}
