package interop

// The WebSocket transport and tasks against the TypeScript SDK
// (@modelcontextprotocol/sdk 1.32.2, ws 8.23.0, pinned in
// node/package.json): its WebSocketClientTransport drives ferry's
// WebSocket server (testdata/ws_tsclient.mjs, which also runs the
// experimental tasks of 2025-11-25 through the SDK's client, over
// WebSocket and over Streamable HTTP), and ferry's WebSocket client
// reaches a server built on the SDK's Server (testdata/ws_tsserver.mjs).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
	"github.com/ferrymcp/ferry/websocket"
)

// taskFixtureServer has an ordinary tool and two that may run as tasks.
func taskFixtureServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ferry-ws", Version: "1"}, &server.Options{Tasks: server.TaskOptions{PollInterval: 50 * time.Millisecond}})
	opt := &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}
	s.AddTool(&protocol.Tool{Name: "echo", InputSchema: jsontext.Value(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var a struct {
				Message string `json:"message"`
			}
			json.Unmarshal(args, &a)
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(a.Message)}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "slow", Execution: opt, InputSchema: jsontext.Value(`{"type":"object","properties":{"ms":{"type":"number"}}}`)},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			var a struct {
				Ms int `json:"ms"`
			}
			json.Unmarshal(args, &a)
			select {
			case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("slept")}}, nil
		})
	s.AddTool(&protocol.Tool{Name: "ask", Execution: opt},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Your name?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return nil, err
			}
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("Hello, " + res.Content["name"].(string) + "!")}}, nil
		})
	return s
}

func TestTSWebSocketClientFerryServer(t *testing.T) {
	nodePackageBin(t, "@modelcontextprotocol/sdk", "dist/esm/client/websocket.js")
	s := taskFixtureServer()
	defer s.Close()
	wsh := websocket.NewHandler(s, nil)
	wts := httptest.NewServer(wsh)
	defer wts.Close()
	defer wsh.Close()
	hh := streamablehandler.New(s, nil)
	hts := httptest.NewServer(hh)
	defer hts.Close()
	defer hh.Close()

	legacy := map[string]any{
		"protocolVersion":     "2025-11-25",
		"serverTasks":         map[string]any{"list": map[string]any{}, "cancel": map[string]any{}, "requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}},
		"tools":               []any{"ask:optional", "echo:-", "slow:optional"},
		"slowResult":          "slept",
		"streamKinds":         []any{"taskCreated", "taskStatus", "result"},
		"getTask":             "completed",
		"listed":              true,
		"taskResult":          "slept",
		"relatedTaskOnResult": true,
		// "Receivers MUST reject cancellation requests for tasks already
		// in a terminal status ... -32602".
		"cancelFinished":      float64(-32602),
		"askResult":           "Hello, Ada!",
		"elicitedRelatedTask": true,
		"cancelRunning":       "cancelled",
		"afterCancel":         "cancelled",
		"ok":                  true,
	}
	for _, tc := range []struct{ name, url, echo string }{
		{"websocket", "ws" + strings.TrimPrefix(wts.URL, "http"), "hi over ws"},
		{"streamable", hts.URL, "hi over http"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]any{"echo": tc.echo}
			for k, v := range legacy {
				want[k] = v
			}
			if tc.name == "websocket" {
				want["discover"] = map[string]any{"versions": []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, "tasksExtension": true}
				want["statelessEcho"] = "stateless"
				want["statelessTask"] = "task"
				want["statelessTaskResult"] = "slept"
			}
			got := runNodeSummary(t, filepath.Join("testdata", "ws_tsclient.mjs"), nodeModules, tc.url)
			for k, v := range want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
		})
	}
}

// runNodeSummary runs a script that prints one JSON summary line last.
func runNodeSummary(t *testing.T, script string, args ...string) map[string]any {
	t.Helper()
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{abs}, args...)...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("%s: %v; no JSON summary (%v)\nstdout: %s\nstderr: %s", script, runErr, err, stdout.Bytes(), stderr.Bytes())
	}
	if e, ok := got["error"]; ok || runErr != nil {
		t.Fatalf("%s failed: %v %v\nsummary: %s\nstderr: %s", script, e, runErr, lines[len(lines)-1], stderr.Bytes())
	}
	return got
}

func TestFerryWebSocketClientTSServer(t *testing.T) {
	requireNode(t)
	script, _ := filepath.Abs(filepath.Join("testdata", "ws_tsserver.mjs"))
	cmd := exec.Command(nodeBin, script, nodeModules)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- u
			}
		}
	}()
	var url string
	select {
	case url = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatalf("ws_tsserver.mjs did not start: %s", stderr.Bytes())
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, &websocket.Transport{URL: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, stderr.Bytes())
	}
	defer c.Close()
	if c.Stateless() || c.ServerInfo().Name != "ts-ws-server" {
		t.Fatalf("era/server: stateless=%v %+v (version %s)", c.Stateless(), c.ServerInfo(), c.ProtocolVersion())
	}
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil || len(tools) != 1 || tools[0].Name != "echo" {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	res, err := c.Call(ctx, "echo", map[string]string{"message": "from ferry"})
	if err != nil || res.Content[0].Text != "ts echo: from ferry" {
		t.Fatalf("call: %+v %v", res, err)
	}
	t.Logf("ferry's WebSocket client with the TypeScript SDK's Server at %s: %s, %d tool(s), echo %q", url, c.ProtocolVersion(), len(tools), res.Content[0].Text)
}
