package interop

// ferry's HTTP+SSE transport (2024-11-05, transport/sse) against peers we
// did not write:
//
//   - ferry's ssehandler.Handler driven by the TypeScript SDK's legacy
//     SSEClientTransport (testdata/sse_tsclient.mjs), letting the SDK
//     propose its latest revision and pinned to 2024-11-05;
//   - ferry's sse.Transport against @modelcontextprotocol/server-everything
//     started in "sse" mode (express, SSEServerTransport, PORT from the
//     environment, endpoints /sse and /message).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/ssehandler"
)

// sseFerryServer is the server the TypeScript client talks to.
func sseFerryServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "ferry-sse-interop", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes its message."}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "count", Description: "Counts to n, reporting progress."}, func(ctx context.Context, req *server.Request, in struct {
		N     int `json:"n"`
		Delay int `json:"delayMs"`
	}) (string, error) {
		for i := 1; i <= in.N; i++ {
			req.Progress(ctx, float64(i), float64(in.N), fmt.Sprint("step ", i))
			time.Sleep(time.Duration(in.Delay) * time.Millisecond)
		}
		return fmt.Sprint("counted to ", in.N), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "sample", Description: "Asks the client's model, then lists its roots."}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		msg, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{MaxTokens: 20,
			Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("hi from ferry")}}}})
		if err != nil {
			return "", err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		var uris []string
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		return fmt.Sprintf("%s (%s); roots: %s", msg.Content[0].Text, msg.Model, strings.Join(uris, ",")), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "log", Description: "Logs its message."}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		req.Log(ctx, protocol.LevelDebug, "sse", "hidden at level info")
		req.Log(ctx, protocol.LevelWarning, "sse", in.Message)
		return "logged", nil
	})
	s.AddResource(&protocol.Resource{URI: "test://readme", Name: "readme", MIMEType: "text/plain"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "read me"}}}, nil
	})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "item " + req.URIVars["id"]}}}, nil
	})
	s.AddPrompt(&protocol.Prompt{Name: "greet", Arguments: []protocol.PromptArgument{{Name: "name", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("Hello, " + args["name"] + "!")}}}, nil
		})
	return s
}

// sseTSClientWant is the summary sse_tsclient.mjs must print, but for
// protocolVersion, which depends on the run.
const sseTSClientWant = `{
	"endpointPath": "/message",
	"endpointHasSession": true,
	"serverName": "ferry-sse-interop",
	"tools": ["count", "echo", "log", "sample"],
	"echo": "hello over sse\nline 2",
	"count": {"text": "counted to 4", "wireProgress": [1, 2, 3, 4], "onprogressSeen": true},
	"sample": "sampled by ts: hi from ferry (ts-canned-model); roots: file:///tmp/sse-root",
	"samplings": 1,
	"rootsRequests": 1,
	"log": "logged",
	"logs": ["warning:from ts"],
	"resources": ["test://readme"],
	"readme": ["read me"],
	"template": ["item 42"],
	"prompts": ["greet"],
	"prompt": ["user:Hello, ts!"],
	"missingTool": -32602,
	"ok": true
}`

func TestSSETSClientFerryServer(t *testing.T) {
	requireNode(t)
	nodePackageBin(t, "@modelcontextprotocol/sdk", "dist/esm/client/sse.js")
	script, err := filepath.Abs(filepath.Join("testdata", "sse_tsclient.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ pin, want string }{
		{"", protocol.Version20251125}, // the SDK's latest
		{protocol.Version20241105, protocol.Version20241105},
	} {
		name := "sdk-latest"
		if tc.pin != "" {
			name = "pinned-" + tc.pin
		}
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			h := ssehandler.New(sseFerryServer(), nil)
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()

			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			args := []string{script, nodeModules, ts.URL + "/sse"}
			if tc.pin != "" {
				args = append(args, tc.pin)
			}
			cmd := exec.CommandContext(ctx, nodeBin, args...)
			cmd.WaitDelay = 5 * time.Second
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			runErr := cmd.Run()
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
				t.Fatalf("sse_tsclient.mjs: %v; no JSON summary (%v)\nstdout: %s\nstderr: %s", runErr, err, stdout.Bytes(), stderr.Bytes())
			}
			if e, ok := got["error"]; ok {
				t.Fatalf("sse_tsclient.mjs failed: %v\nstderr: %s", e, stderr.Bytes())
			}
			if runErr != nil {
				t.Fatalf("sse_tsclient.mjs: %v\nstderr: %s", runErr, stderr.Bytes())
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(sseTSClientWant), &want); err != nil {
				t.Fatal(err)
			}
			want["protocolVersion"] = tc.want
			sseCompareSummary(t, got, want)
			// The SDK's close ends the event stream, and with it the session.
			deadline := time.Now().Add(5 * time.Second)
			for h.Sessions() != 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := h.Sessions(); n != 0 {
				t.Errorf("%d sessions left after the client closed", n)
			}
			t.Logf("TypeScript SDK SSEClientTransport: protocol %v, %d tools, endpoint %v", got["protocolVersion"], len(got["tools"].([]any)), got["endpointPath"])
		})
	}
}

func sseCompareSummary(t *testing.T, got, want map[string]any) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot:
			t.Errorf("%s: missing from the summary, want %s", k, jsonString(w))
		case !inWant:
			t.Errorf("%s: unexpected in the summary: %s", k, jsonString(g))
		case !reflect.DeepEqual(w, g):
			t.Errorf("%s:\n got %s\nwant %s", k, jsonString(g), jsonString(w))
		}
	}
}

// startEverythingSSE runs server-everything in "sse" mode on a free port
// and returns its SSE URL once it listens.
func startEverythingSSE(t *testing.T, ctx context.Context) string {
	t.Helper()
	entry := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.CommandContext(ctx, nodeBin, entry, "sse")
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var log strings.Builder
	listening := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		once := sync.OnceFunc(func() { close(listening) })
		for sc.Scan() {
			mu.Lock()
			log.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if strings.Contains(sc.Text(), "Server is running on port") {
				once()
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-drained
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("server-everything stderr:\n%s", log.String())
			mu.Unlock()
		}
	})
	select {
	case <-listening:
	case <-drained:
		t.Fatal("server-everything exited before listening")
	case <-ctx.Done():
		t.Fatal("server-everything did not start listening")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/sse", port)
}

func TestSSEFerryClientServerEverything(t *testing.T) {
	requireNode(t)
	for _, tc := range []struct{ name, pin, want string }{
		{"pinned-2024-11-05", protocol.Version20241105, protocol.Version20241105},
		{"detect", "", protocol.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			url := startEverythingSSE(t, ctx)
			// The client's goroutines, and its HTTP connections', must be
			// gone when it is closed.
			leakcheck.Check(t)
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()

			var mu sync.Mutex
			var samples, rootsAsked int
			var logs []string
			c, err := client.Connect(ctx, &sse.Transport{URL: url, Client: hc}, &client.Options{
				Info:            protocol.Implementation{Name: "ferry-interop-sse", Version: "0.0.1"},
				ProtocolVersion: tc.pin,
				RequestTimeout:  20 * time.Second,
				LogLevel:        protocol.LevelDebug,
				Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					mu.Lock()
					samples++
					mu.Unlock()
					return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: cannedModelSSE, StopReason: "endTurn",
						Content: protocol.SamplingContent{protocol.TextContent(cannedSampleSSE)}}, nil
				},
				Roots: func(ctx context.Context) ([]protocol.Root, error) {
					mu.Lock()
					rootsAsked++
					mu.Unlock()
					return []protocol.Root{{URI: "file:///tmp/ferry-sse-root", Name: "ferry sse root"}}, nil
				},
				OnLog: func(p *protocol.LoggingMessageParams) {
					mu.Lock()
					logs = append(logs, fmt.Sprint(p.Data))
					mu.Unlock()
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if c.ProtocolVersion() != tc.want || c.Stateless() {
				t.Errorf("protocol %s (stateless %v), want %s", c.ProtocolVersion(), c.Stateless(), tc.want)
			}
			if got := c.ServerInfo().Name; got != "mcp-servers/everything" {
				t.Errorf("server name %q", got)
			}

			tools, err := client.Collect(c.Tools(ctx))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation", "trigger-sampling-request", "get-roots-list"} {
				if !slices.Contains(names, want) {
					t.Errorf("tool %s missing from %v", want, names)
				}
			}

			call := func(ctx context.Context, name string, args map[string]any, want ...string) {
				t.Helper()
				res, err := c.Call(ctx, name, args)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				text := ""
				for _, ct := range res.Content {
					text += ct.Text
				}
				if res.IsError {
					t.Errorf("%s: tool error: %s", name, text)
				}
				for _, w := range want {
					if !strings.Contains(text, w) {
						t.Errorf("%s: %q does not contain %q", name, text, w)
					}
				}
			}
			call(ctx, "echo", map[string]any{"message": "over sse\nline 2"}, "Echo: over sse\nline 2")
			call(ctx, "get-sum", map[string]any{"a": 2, "b": 3}, "5")
			var progress []float64
			pctx := client.WithProgress(ctx, func(p *protocol.ProgressParams) {
				mu.Lock()
				progress = append(progress, p.Progress)
				mu.Unlock()
			})
			call(pctx, "trigger-long-running-operation", map[string]any{"duration": 0.6, "steps": 3}, "Long running operation completed")
			call(ctx, "trigger-sampling-request", map[string]any{"prompt": "say hi", "maxTokens": 20}, cannedSampleSSE, cannedModelSSE)
			call(ctx, "get-roots-list", nil, "file:///tmp/ferry-sse-root", "ferry sse root")
			call(ctx, "toggle-simulated-logging", nil, "Started simulated")

			resources, err := client.Collect(c.Resources(ctx))
			if err != nil || len(resources) == 0 {
				t.Fatalf("resources: %d %v", len(resources), err)
			}
			rr, err := c.ReadResource(ctx, resources[0].URI)
			if err != nil || len(rr.Contents) == 0 {
				t.Errorf("read %s: %+v %v", resources[0].URI, rr, err)
			}
			prompts, err := client.Collect(c.Prompts(ctx))
			if err != nil || len(prompts) == 0 {
				t.Fatalf("prompts: %d %v", len(prompts), err)
			}
			pr, err := c.GetPrompt(ctx, "simple-prompt", nil)
			if err != nil || len(pr.Messages) == 0 {
				t.Errorf("simple-prompt: %+v %v", pr, err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
			// The simulated log messages arrive every few seconds.
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				n := len(logs)
				mu.Unlock()
				if n > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			mu.Lock()
			if len(progress) != 3 {
				t.Errorf("progress %v, want 3 notifications", progress)
			}
			if samples != 1 || rootsAsked == 0 {
				t.Errorf("%d samplings, %d roots requests", samples, rootsAsked)
			}
			if len(logs) == 0 {
				t.Error("no log message on the event stream")
			}
			t.Logf("server-everything over SSE: protocol %s, %d tools, %d resources, %d prompts, %d progress, %d log messages, roots asked %d times",
				c.ProtocolVersion(), len(tools), len(resources), len(prompts), len(progress), len(logs), rootsAsked)
			mu.Unlock()
			c.Close()
			hc.CloseIdleConnections()
		})
	}
}

const (
	cannedSampleSSE = "A canned answer over SSE."
	cannedModelSSE  = "ferry-sse-model"
)
