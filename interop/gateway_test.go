package interop

// `ferry serve` (the gateway) in front of @modelcontextprotocol/server-everything
// and @modelcontextprotocol/server-memory, driven by peers we did not
// write: the MCP Inspector's CLI (--transport http in both eras, and
// --transport sse), the TypeScript SDK's Streamable HTTP client, and the
// go-sdk client; and `ferry proxy` started from a Claude-Desktop-style
// configuration in front of the same gateway.

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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// gatewayRun is a running `ferry serve`.
type gatewayRun struct {
	url string // http://127.0.0.1:PORT
	cmd *exec.Cmd
	dir string // its configuration and server-memory's file
}

// The gateway the tests share: one `ferry serve` (and its two Node
// children) for all of them, since starting them is most of a test's
// time on a small machine. TestMain stops it once the tests are done and
// fails the run if it does not exit cleanly.
var (
	sharedGatewayOnce sync.Once
	sharedGatewayRun  *gatewayRun
	sharedGatewayErr  error
)

// startGateway returns the shared `ferry serve` for server-everything and
// server-memory, started by the first test that asks, once both are
// connected. The tests only add to what they share (server-memory's
// graph) and each checks only what it wrote or what was there before.
func startGateway(t *testing.T) *gatewayRun {
	t.Helper()
	bin := ferryBinary(t)
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	memory := nodePackageBin(t, "@modelcontextprotocol/server-memory", "dist/index.js")
	sharedGatewayOnce.Do(func() {
		sharedGatewayRun, sharedGatewayErr = launchGateway(bin, everything, memory)
	})
	if sharedGatewayErr != nil {
		t.Fatal(sharedGatewayErr)
	}
	return sharedGatewayRun
}

// launchGateway runs `ferry serve` for server-everything and server-memory
// and waits until both are connected.
func launchGateway(bin, everything, memory string) (*gatewayRun, error) {
	dir, err := os.MkdirTemp("", "ferry-gateway-interop")
	if err != nil {
		return nil, err
	}
	g := &gatewayRun{dir: dir}
	cfg := filepath.Join(dir, "mcp.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}},
		"memory":     map[string]any{"command": nodeBin, "args": []string{memory}, "env": map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}},
	}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		return nil, err
	}
	g.cmd = exec.Command(bin, "serve", "--config", cfg, "--addr", "127.0.0.1:0")
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
		for lines.Scan() {
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case g.url = <-found:
	case <-time.After(30 * time.Second):
		g.stop()
		return nil, fmt.Errorf("ferry serve did not say where it listens")
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := http.Get(g.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("the servers behind ferry serve did not get ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends ferry serve with SIGINT and reports whether it exited
// cleanly.
func (g *gatewayRun) stop() error {
	defer os.RemoveAll(g.dir)
	g.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("ferry serve exited: %v", err)
		}
		return nil
	case <-time.After(30 * time.Second):
		g.cmd.Process.Kill()
		<-done
		return fmt.Errorf("ferry serve did not stop within 30s of SIGINT")
	}
}

// stopSharedGateway stops the shared gateway, if a test started it.
func stopSharedGateway() error {
	if sharedGatewayRun == nil {
		return nil
	}
	return sharedGatewayRun.stop()
}

// The Inspector's CLI lists and calls through the aggregated endpoint and
// one server's own, over Streamable HTTP in both eras and over HTTP+SSE.
func TestGatewayInspectorCLI(t *testing.T) {
	launcher := nodePackageBin(t, "@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
	g := startGateway(t)
	home := t.TempDir()
	type endpoint struct{ path, echo, memoryTool string }
	transports := []struct {
		name string
		args []string
		path func(endpoint) string
	}{
		{"http-legacy", []string{"--transport", "http", "--protocol-era", "legacy"}, func(e endpoint) string { return e.path + "/mcp" }},
		{"http-stateless", []string{"--transport", "http", "--protocol-era", "modern"}, func(e endpoint) string { return e.path + "/mcp" }},
		{"sse", []string{"--transport", "sse"}, func(e endpoint) string { return e.path + "/sse" }},
	}
	endpoints := []endpoint{{"", "everything__echo", "memory__read_graph"}, {"/servers/everything", "echo", ""}, {"/servers/memory", "", "read_graph"}}
	for _, tr := range transports {
		for _, ep := range endpoints {
			t.Run(tr.name+strings.ReplaceAll(ep.path, "/", "_"), func(t *testing.T) {
				t.Parallel()
				base := []string{launcher, "--cli", "--format", "json", "--server-url", g.url + tr.path(ep)}
				base = append(base, tr.args...)
				res := runInspector(t, home, append(base, "--method", "tools/list"))
				var list struct {
					Tools []struct{ Name string } `json:"tools"`
				}
				json.Unmarshal(res, &list)
				names := map[string]bool{}
				for _, tl := range list.Tools {
					names[tl.Name] = true
				}
				for _, want := range []string{ep.echo, ep.memoryTool} {
					if want != "" && !names[want] {
						t.Errorf("tools/list lacks %s: %s", want, res)
					}
				}
				if ep.echo != "" {
					res = runInspector(t, home, append(base, "--method", "tools/call", "--tool-name", ep.echo, "--tool-arg", "message=through the gateway"))
					if r := decodeToolResult(t, res); r.IsError || len(r.Content) != 1 || r.Content[0].Text != "Echo: through the gateway" {
						t.Errorf("%s: %s", ep.echo, res)
					}
				}
				if ep.memoryTool != "" {
					res = runInspector(t, home, append(base, "--method", "tools/call", "--tool-name", ep.memoryTool))
					if r := decodeToolResult(t, res); r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "entities") {
						t.Errorf("%s: %s", ep.memoryTool, res)
					}
				}
			})
		}
	}
}

// Two TypeScript SDK clients at once: each lists and calls through both
// endpoints, and each gets server-everything's sampling request, which it
// answers with its own model.
func TestGatewayTypeScriptClients(t *testing.T) {
	script, _ := filepath.Abs(filepath.Join("testdata", "gateway_tsclient.mjs"))
	g := startGateway(t)
	var wg sync.WaitGroup
	for _, who := range []string{"alice", "bob"} {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, nodeBin, script, nodeModules, g.url, who).Output()
			var got map[string]any
			if err != nil || json.Unmarshal(out, &got) != nil {
				t.Errorf("%s: %v %s", who, err, out)
				return
			}
			if got["error"] != nil {
				t.Errorf("%s: %v", who, got["error"])
				return
			}
			if got["hasEverythingEcho"] != true || got["hasMemoryReadGraph"] != true || got["memoryTools"] != true {
				t.Errorf("%s: tools %v", who, got)
			}
			if got["echo"] != "Echo: from "+who {
				t.Errorf("%s: echo %q", who, got["echo"])
			}
			if s, _ := got["sampled"].(string); !strings.Contains(s, who+" answers: Resource trigger-sampling-request context: "+who+"'s question") ||
				!strings.Contains(s, who+"-model") {
				t.Errorf("%s got someone else's sampling: %q", who, s)
			}
			if s, _ := got["graph"].(string); !strings.Contains(s, `"name": "`+who+`"`) && !strings.Contains(s, `"name":"`+who+`"`) {
				t.Errorf("%s: graph %q", who, s)
			}
			t.Logf("%s: %s", who, out)
		})
	}
	wg.Wait()
}

// server-everything's sampling request reaches the right one of two
// concurrent clients, each answering differently, in both eras (the
// stateless client gets an input_required result and retries).
func TestGatewaySamplingRouted(t *testing.T) {
	g := startGateway(t)
	for _, era := range []struct{ name, version string }{{"legacy", protocol.LatestLegacyVersion}, {"stateless", protocol.Version20260728}} {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			for _, who := range []string{"alice", "bob"} {
				c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/mcp"}, &client.Options{
					ProtocolVersion: era.version,
					Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
						return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: who + "-model",
							Content: protocol.SamplingContent{protocol.TextContent(who + " answers")}}, nil
					},
				})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				wg.Go(func() {
					for i := range 3 {
						res, err := c.Call(ctx, "everything__trigger-sampling-request", map[string]any{"prompt": fmt.Sprint(who, i)})
						if err != nil || res.IsError || len(res.Content) == 0 {
							t.Errorf("%s: %+v %v", who, res, err)
							return
						}
						if txt := res.Content[0].Text; !strings.Contains(txt, who+" answers") || !strings.Contains(txt, who+"-model") {
							t.Errorf("%s got %q", who, txt)
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// The go-sdk client lists and calls through both endpoints.
func TestGatewayGoSDKClient(t *testing.T) {
	g := startGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, tc := range []struct{ path, tool string }{{"/mcp", "everything__echo"}, {"/servers/everything/mcp", "echo"}} {
		c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-interop", Version: goSDKVersion}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: g.url + tc.path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, tl := range tools.Tools {
			found = found || tl.Name == tc.tool
		}
		if !found {
			t.Errorf("%s: no %s among %d tools", tc.path, tc.tool, len(tools.Tools))
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"message": "go-sdk"}})
		if err != nil {
			t.Fatal(err)
		}
		if tcnt, ok := res.Content[0].(*mcp.TextContent); !ok || tcnt.Text != "Echo: go-sdk" {
			t.Errorf("%s: %+v", tc.path, res.Content)
		}
		t.Logf("go-sdk on %s: %d tools, protocol %s", tc.path, len(tools.Tools), cs.InitializeResult().ProtocolVersion)
		cs.Close()
	}
}

// A Claude-Desktop-style configuration whose server is `ferry proxy URL`
// (a stdio server in front of ferry serve): ferry's CLI and the
// Inspector (stdio, both eras) use the gateway's servers through it.
func TestGatewayProxyFromClaudeConfig(t *testing.T) {
	g := startGateway(t)
	bin := ferryBinary(t)
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote": map[string]any{"command": bin, "args": []string{"proxy", g.url + "/mcp"}},
	}})
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "call", "--config", cfg, "--format", "json", "remote.everything__echo", "message=via proxy").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Echo: via proxy") {
		t.Errorf("ferry call through ferry proxy: %v\n%s", err, out)
	}
	launcher := nodePackageBin(t, "@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
	home := t.TempDir()
	for _, era := range []string{"legacy", "modern"} {
		res := runInspector(t, home, []string{launcher, "--cli", "--format", "json", "--config", cfg, "--server", "remote",
			"--protocol-era", era, "--method", "tools/call", "--tool-name", "memory__read_graph"})
		if r := decodeToolResult(t, res); r.IsError || len(r.Content) == 0 || !strings.Contains(r.Content[0].Text, "entities") {
			t.Errorf("%s: %s", era, res)
		}
	}
}
