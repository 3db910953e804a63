package interop

// A view of `ferry serve` (/views/NAME/mcp and /views/NAME/sse: issue 34
// item 2) in front of @modelcontextprotocol/server-everything, driven by
// peers we did not write: the MCP Inspector's CLI (Streamable HTTP in
// both eras, and HTTP+SSE) and the TypeScript SDK's client (Streamable
// HTTP and SSE; it speaks the legacy era only). The view renames
// everything's echo and get-sum, fixes echo's message, get-sum's b and
// args-prompt's state; a client sending a fixed argument gets -32602.
// SIGHUP swaps in a changed view, sessions kept, and refuses a bad one.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// supportView is the view the tests serve, as ferry.json holds it.
var supportView = map[string]any{
	"tools": map[string]any{
		"everything__echo":    map[string]any{"name": "say", "title": "Say", "description": "Says the team's motto.", "fixed": map[string]any{"message": "we fix it"}},
		"everything__get-sum": map[string]any{"name": "add", "fixed": map[string]any{"b": 10}},
	},
	"prompts": map[string]any{
		"everything__args-prompt": map[string]any{"name": "weather", "fixed": map[string]any{"state": "Oregon"}},
	},
}

// viewsGateway is a `ferry serve` of its own, whose configuration the
// tests change (the shared one's they do not), and what it logs.
type viewsGateway struct {
	*gatewayRun
	cfg  string
	mu   sync.Mutex
	log  bytes.Buffer
	line *sync.Cond // broadcast on each line logged, and when a waitLog's context ends
}

// writeConfig writes the gateway's configuration: server-everything and
// views.
func (g *viewsGateway) writeConfig(t *testing.T, views map[string]any) {
	t.Helper()
	everything := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	data, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"everything": map[string]any{"command": nodeBin, "args": []string{everything, "stdio"}}},
		"views":      views,
	})
	if err := os.WriteFile(g.cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until the log holds text, or ctx ends.
func (g *viewsGateway) waitLog(ctx context.Context, text string) bool {
	stop := context.AfterFunc(ctx, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.line.Broadcast()
	})
	defer stop()
	g.mu.Lock()
	defer g.mu.Unlock()
	for !strings.Contains(g.log.String(), text) {
		if ctx.Err() != nil {
			return false
		}
		g.line.Wait()
	}
	return true
}

func (g *viewsGateway) logged() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.log.String()
}

// launchViewsGateway runs `ferry serve` with the support view and waits
// until server-everything is connected.
func launchViewsGateway(t *testing.T) *viewsGateway {
	bin := ferryBinary(t)
	dir := t.TempDir()
	g := &viewsGateway{gatewayRun: &gatewayRun{dir: dir}, cfg: filepath.Join(dir, "ferry.json")}
	g.line = sync.NewCond(&g.mu)
	g.writeConfig(t, map[string]any{"support": supportView})
	g.cmd = exec.Command(bin, "serve", "--config", g.cfg, "--addr", "127.0.0.1:0")
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.stop(); err != nil {
			t.Error(err)
		}
	})
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^ferry serve: (http://[0-9.:]+)/mcp`)
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			g.mu.Lock()
			g.log.WriteString(lines.Text() + "\n")
			g.line.Broadcast()
			g.mu.Unlock()
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case g.url = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("ferry serve did not say where it listens:\n%s", g.logged())
	}
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
			t.Fatalf("server-everything behind ferry serve did not get ready:\n%s", g.logged())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runInspectorRefused runs the Inspector CLI for a request that must fail
// and returns the error message it prints on stderr (it prints no
// JSON-RPC code: the TypeScript client's test checks that).
func runInspectorRefused(t *testing.T, home string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Env = append(cmd.Environ(), "HOME="+home, "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out struct {
		Error struct{ Message string } `json:"error"`
	}
	if jerr := json.Unmarshal(stderr.Bytes(), &out); jerr != nil || err == nil || out.Error.Message == "" {
		t.Fatalf("inspector %s: want a refusal, got %v (json: %v)\nstdout: %s\nstderr: %s", strings.Join(args[1:], " "), err, jerr, stdout.Bytes(), stderr.Bytes())
	}
	return out.Error.Message
}

func TestGatewayViews(t *testing.T) {
	g := launchViewsGateway(t)
	t.Run("peers", func(t *testing.T) {
		t.Run("inspector", func(t *testing.T) { viewsInspector(t, g.url) })
		t.Run("typescript", func(t *testing.T) { viewsTypeScript(t, g.url) })
	})
	t.Run("sighup", func(t *testing.T) { viewsReload(t, g) })
}

// The Inspector's CLI lists the view, calls its renamed tools with their
// fixed arguments set, gets its prompt, and is refused a fixed argument.
func viewsInspector(t *testing.T, url string) {
	launcher := nodePackageBin(t, "@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
	home := t.TempDir()
	for _, tr := range []struct{ name, path string }{
		{"legacy", "/views/support/mcp"}, {"modern", "/views/support/mcp"}, {"sse", "/views/support/sse"},
	} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			base := []string{launcher, "--cli", "--format", "json", "--server-url", url + tr.path}
			if tr.name == "sse" {
				base = append(base, "--transport", "sse")
			} else {
				base = append(base, "--transport", "http", "--protocol-era", tr.name)
			}
			var list struct {
				Tools []struct {
					Name, Title, Description string
					InputSchema              struct {
						Properties map[string]any `json:"properties"`
						Required   []string       `json:"required"`
					} `json:"inputSchema"`
				} `json:"tools"`
			}
			res := runInspector(t, home, append(base, "--method", "tools/list"))
			decodeInto(t, res, &list)
			if len(list.Tools) != 2 || list.Tools[0].Name != "say" || list.Tools[1].Name != "add" {
				t.Fatalf("tools/list: %s", res)
			}
			say, add := list.Tools[0], list.Tools[1]
			if say.Title != "Say" || say.Description != "Says the team's motto." || len(say.InputSchema.Properties) != 0 {
				t.Errorf("say as listed: %+v", say)
			}
			if add.InputSchema.Properties["b"] != nil || slices.Contains(add.InputSchema.Required, "b") || add.InputSchema.Properties["a"] == nil {
				t.Errorf("add as listed: %+v", add)
			}
			res = runInspector(t, home, append(base, "--method", "tools/call", "--tool-name", "say"))
			if r := decodeToolResult(t, res); r.IsError || len(r.Content) != 1 || r.Content[0].Text != "Echo: we fix it" {
				t.Errorf("say: %s", res)
			}
			res = runInspector(t, home, append(base, "--method", "tools/call", "--tool-name", "add", "--tool-arg", "a=5"))
			if r := decodeToolResult(t, res); r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "15") {
				t.Errorf("add a=5: %s", res)
			}
			res = runInspector(t, home, append(base, "--method", "prompts/get", "--prompt-name", "weather", "--prompt-args", "city=Portland"))
			if !strings.Contains(string(res), "What's weather in Portland, Oregon?") {
				t.Errorf("weather: %s", res)
			}
			msg := runInspectorRefused(t, home, append(base, "--method", "tools/call", "--tool-name", "say", "--tool-arg", "message=mine"))
			if want := `invalid params: "say": argument "message" is set by the view, and may not be sent`; msg != want {
				t.Errorf("say message=mine: %q, want %q", msg, want)
			}
		})
	}
}

// viewsTSWant is what gateway_views_tsclient.mjs prints for the support
// view, over Streamable HTTP and SSE alike.
const viewsTSWant = `{
	"protocolVersion": "2025-11-25",
	"tools": ["say", "add"],
	"sayTitle": "Say",
	"sayDescription": "Says the team's motto.",
	"sayProperties": [],
	"addProperties": ["a"],
	"addRequired": ["a"],
	"say": "Echo: we fix it",
	"add": "The sum of 5 and 10 is 15.",
	"sayFixedSent": {"code": -32602, "message": "MCP error -32602: invalid params: \"say\": argument \"message\" is set by the view, and may not be sent"},
	"hidden": {"code": -32602, "message": "MCP error -32602: unknown tool \"everything__echo\""},
	"prompts": [{"name": "weather", "arguments": ["city"]}],
	"weather": "What's weather in Portland, Oregon?",
	"weatherFixedSent": {"code": -32602, "message": "MCP error -32602: invalid params: \"weather\": argument \"state\" is set by the view, and may not be sent"}
}`

// The TypeScript SDK's client sees the same view, over Streamable HTTP
// and over SSE, and gets -32602 for a fixed argument.
func viewsTypeScript(t *testing.T, url string) {
	script, _ := filepath.Abs(filepath.Join("testdata", "gateway_views_tsclient.mjs"))
	for _, path := range []string{"/views/support/mcp", "/views/support/sse"} {
		t.Run(strings.TrimPrefix(path, "/views/support/"), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, nodeBin, script, nodeModules, url+path).Output()
			var got, want map[string]any
			if err := json.Unmarshal([]byte(viewsTSWant), &want); err != nil {
				t.Fatal(err)
			}
			if err != nil || json.Unmarshal(out, &got) != nil {
				t.Fatalf("%v %s", err, out)
			}
			if path == "/views/support/sse" {
				delete(want, "protocolVersion") // the SSE transport does not say
				delete(got, "protocolVersion")
			}
			for k, w := range want {
				if !reflect.DeepEqual(got[k], w) {
					t.Errorf("%s: got %v, want %v", k, got[k], w)
				}
			}
			if got["error"] != nil {
				t.Errorf("error: %v", got["error"])
			}
		})
	}
}

// SIGHUP swaps in a changed view, its open session kept; a view with an
// error refuses the configuration whole, the old view kept and the error
// naming its field.
func viewsReload(t *testing.T, g *viewsGateway) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	changed := make(chan string, 10)
	c, err := client.Connect(ctx, &streamable.Transport{URL: g.url + "/views/support/mcp"},
		&client.Options{ProtocolVersion: protocol.LatestLegacyVersion, OnListChanged: func(m string) { changed <- m }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	renamed := map[string]any{"tools": map[string]any{"everything__echo": map[string]any{"name": "speak", "fixed": map[string]any{"message": "reloaded"}}}}
	g.writeConfig(t, map[string]any{"support": renamed})
	g.cmd.Process.Signal(syscall.SIGHUP)
	// The swap tells the view's sessions that its lists changed: after
	// the change that is the swap's, the view calls echo "speak".
	for swapped := false; !swapped; {
		select {
		case m := <-changed:
			res, err := c.Call(ctx, "speak", nil)
			swapped = m == protocol.NotificationToolsListChanged && err == nil && !res.IsError && res.Content[0].Text == "Echo: reloaded"
		case <-ctx.Done():
			t.Fatalf("no list change calling the view's echo speak after SIGHUP:\n%s", g.logged())
		}
	}
	if _, err := c.Call(ctx, "say", nil); err == nil {
		t.Error("the old view's tool is still called")
	}
	clash := map[string]any{"tools": map[string]any{
		"everything__echo": map[string]any{"name": "same"}, "everything__get-sum": map[string]any{"name": "same"},
	}}
	g.writeConfig(t, map[string]any{"support": clash})
	g.cmd.Process.Signal(syscall.SIGHUP)
	want := `views.support.tools: \"everything__echo\" and \"everything__get-sum\" are both named \"same\" in the view`
	if !g.waitLog(ctx, want) {
		t.Fatalf("no refusal logged naming the clash:\n%s", g.logged())
	}
	res, err := c.Call(ctx, "speak", nil)
	if err != nil || res.IsError || res.Content[0].Text != "Echo: reloaded" {
		t.Errorf("after a refused reload, speak: %+v %v", res, err)
	}
}
