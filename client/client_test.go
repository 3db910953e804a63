package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

type echoIn struct {
	Message string `json:"message"`
}

type addOut struct {
	Sum float64 `json:"sum"`
}

func testServer(opts *server.Options) *server.Server {
	s := server.New(protocol.Implementation{Name: "test-server", Version: "1.2.3"}, opts)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "add"}, func(ctx context.Context, req *server.Request, in struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}) (addOut, error) {
		return addOut{in.A + in.B}, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "slow"}, func(ctx context.Context, req *server.Request, in struct {
		Steps int `json:"steps"`
		Delay int `json:"delayMs"`
	}) (string, error) {
		for i := 1; i <= in.Steps; i++ {
			req.Progress(ctx, float64(i), float64(in.Steps), fmt.Sprint("step ", i))
			select {
			case <-ctx.Done():
				return "", context.Cause(ctx)
			case <-time.After(time.Duration(in.Delay) * time.Millisecond):
			}
		}
		return "done", nil
	})
	server.AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		<-ctx.Done()
		return "", context.Cause(ctx)
	})
	server.AddTool(s, &protocol.Tool{Name: "interview"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		name, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
		if err != nil {
			return "", err
		}
		msg, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{MaxTokens: 10,
			Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("hi")}}}})
		if err != nil {
			return "", err
		}
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s/%v %s %d", name.Action, name.Content["name"], msg.Content[0].Text, len(roots.Roots)), nil
	})
	server.AddTool(s, &protocol.Tool{Name: "logs"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Log(ctx, protocol.LevelDebug, "t", "debug message")
		req.Log(ctx, protocol.LevelError, "t", "error message")
		return "ok", nil
	})
	s.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "R"}}}, nil
	})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://t/{x}", Name: "t"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
		return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "T" + req.URIVars["x"]}}}, nil
	})
	s.AddPrompt(&protocol.Prompt{Name: "p", Arguments: []protocol.PromptArgument{{Name: "a", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("P" + args["a"])}}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "p", func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
		return []string{value + "!"}, nil
	})
	return s
}

var eras = []struct {
	name      string
	version   string
	stateless bool
}{
	{"detect", "", true},
	{"stateless", protocol.Version20260728, true},
	{"legacy-2025-11-25", protocol.Version20251125, false},
	{"legacy-2025-06-18", protocol.Version20250618, false},
	{"legacy-2024-11-05", protocol.Version20241105, false},
}

// connect wires a client to s over an in-memory pipe.
func connect(t *testing.T, s *server.Server, opts *client.Options) *client.Client {
	t.Helper()
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		conn.Close()
		conn.Wait()
	})
	return c
}

func interviewOptions(version string) *client.Options {
	return &client.Options{
		ProtocolVersion: version,
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ann"}}, nil
		},
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "m", Content: protocol.SamplingContent{protocol.TextContent("sampled")}}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file:///a"}, {URI: "file:///b"}}, nil
		},
	}
}

func TestEras(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			leakcheck.Check(t)
			ctx := context.Background()
			c := connect(t, testServer(nil), interviewOptions(era.version))
			if c.Stateless() != era.stateless {
				t.Fatalf("Stateless() = %v, want %v", c.Stateless(), era.stateless)
			}
			if era.version != "" && c.ProtocolVersion() != era.version {
				t.Errorf("version %s, want %s", c.ProtocolVersion(), era.version)
			}
			if got := c.ServerInfo(); got.Name != "test-server" || got.Version != "1.2.3" {
				t.Errorf("server info %+v", got)
			}
			tools, err := client.Collect(c.Tools(ctx))
			if err != nil || len(tools) != 6 {
				t.Fatalf("tools: %d %v", len(tools), err)
			}
			res, err := c.Call(ctx, "echo", map[string]any{"message": "héllo"})
			if err != nil || res.IsError || res.Content[0].Text != "héllo" {
				t.Fatalf("echo: %+v %v", res, err)
			}
			res, err = c.Call(ctx, "add", map[string]any{"a": 1, "b": 2.5})
			if err != nil || res.IsError {
				t.Fatalf("add: %+v %v", res, err)
			}
			var out addOut
			if protocol.AtLeast(c.ProtocolVersion(), protocol.Version20250618) {
				if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Sum != 3.5 {
					t.Errorf("structured %s: %v", res.StructuredContent, err)
				}
			} else if len(res.StructuredContent) != 0 {
				t.Errorf("structuredContent sent to a %s client", c.ProtocolVersion())
			}
			if res.Content[0].Text != `{"sum":3.5}` {
				t.Errorf("text fallback %q", res.Content[0].Text)
			}
			res, err = c.Call(ctx, "echo", map[string]any{"message": 1})
			if err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, "message") {
				t.Errorf("bad arguments: %+v %v", res, err)
			}
			if _, err := c.Call(ctx, "missing", nil); err == nil {
				t.Error("unknown tool: no error")
			}

			res, err = c.Call(ctx, "interview", nil)
			if !protocol.AtLeast(c.ProtocolVersion(), protocol.Version20250618) {
				// Elicitation came with 2025-06-18: the protocol error of
				// a missing capability says so, as in the stateless era.
				var rpcErr *jsonrpc.Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeMissingRequiredClientCapability {
					t.Errorf("interview: %+v %v, want a missing capability error", res, err)
				}
			} else if err != nil || !strings.Contains(res.Content[0].Text, "accept/Ann sampled 2") {
				t.Errorf("interview: %+v %v", res, err)
			}

			rr, err := c.ReadResource(ctx, "test://t/7")
			if err != nil || rr.Contents[0].Text != "T7" {
				t.Errorf("template read: %+v %v", rr, err)
			}
			_, err = c.ReadResource(ctx, "test://nope")
			var rpcErr *jsonrpc.Error
			wantCode := int64(protocol.CodeResourceNotFound)
			if c.Stateless() {
				wantCode = jsonrpc.CodeInvalidParams
			}
			if !errors.As(err, &rpcErr) || rpcErr.Code != wantCode {
				t.Errorf("missing resource: %v, want code %d", err, wantCode)
			}
			templates, err := client.Collect(c.ResourceTemplates(ctx))
			if err != nil || len(templates) != 1 {
				t.Errorf("templates %v %v", templates, err)
			}
			pr, err := c.GetPrompt(ctx, "p", map[string]string{"a": "x"})
			if err != nil || pr.Messages[0].Content.Text != "Px" {
				t.Errorf("prompt: %+v %v", pr, err)
			}
			if _, err := c.GetPrompt(ctx, "p", nil); err == nil {
				t.Error("prompt without its required argument: no error")
			}
			cr, err := c.Complete(ctx, &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefPrompt, Name: "p"}, Argument: protocol.CompleteArgument{Name: "a", Value: "v"}})
			if err != nil || len(cr.Completion.Values) != 1 || cr.Completion.Values[0] != "v!" {
				t.Errorf("complete: %+v %v", cr, err)
			}
			if err := c.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
		})
	}
}

func TestProgressAndTimeouts(t *testing.T) {
	leakcheck.Check(t)
	for _, version := range []string{protocol.Version20260728, protocol.Version20251125} {
		c := connect(t, testServer(nil), &client.Options{ProtocolVersion: version})
		ctx := context.Background()
		var mu sync.Mutex
		var seen []float64
		pctx := client.WithProgress(ctx, func(p *protocol.ProgressParams) {
			mu.Lock()
			seen = append(seen, p.Progress)
			mu.Unlock()
		})
		// Each step takes 30ms; an idle timeout of 200ms is reset by every
		// progress notification, so the 10-step call (300ms) succeeds.
		res, err := c.Call(client.WithTimeout(pctx, 200*time.Millisecond, 5*time.Second), "slow", map[string]int{"steps": 10, "delayMs": 30})
		if err != nil || res.Content[0].Text != "done" {
			t.Fatalf("%s: slow call: %+v %v", version, res, err)
		}
		mu.Lock()
		if len(seen) != 10 || seen[9] != 10 {
			t.Errorf("%s: progress %v", version, seen)
		}
		mu.Unlock()
		// Without progress, the idle timeout fires.
		_, err = c.Call(client.WithTimeout(ctx, 50*time.Millisecond, 0), "block", nil)
		var te *client.TimeoutError
		if !errors.As(err, &te) || !te.Idle || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: block: %v", version, err)
		}
		// The maximum bounds a call even while progress keeps coming.
		_, err = c.Call(client.WithTimeout(ctx, time.Second, 100*time.Millisecond), "slow", map[string]int{"steps": 100, "delayMs": 10})
		if !errors.As(err, &te) || te.Idle {
			t.Errorf("%s: max timeout: %v", version, err)
		}
		// A maximum alone (no progress to follow) takes the connection's
		// reusable timers.
		_, err = c.Call(client.WithTimeout(ctx, 0, 50*time.Millisecond), "block", nil)
		if !errors.As(err, &te) || te.Idle || te.After != 50*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: max timeout alone: %v", version, err)
		}
	}
}

// The client's own maximum (Options.MaxRequestTimeout) bounds every
// call, the second as the first (their options are made once, for every
// method), and says which method it cut.
func TestMaxRequestTimeout(t *testing.T) {
	leakcheck.Check(t)
	s := testServer(nil)
	s.AddPrompt(&protocol.Prompt{Name: "block"}, func(ctx context.Context, _ *server.Request, _ map[string]string) (*protocol.GetPromptResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	c := connect(t, s, &client.Options{ProtocolVersion: protocol.Version20251125, MaxRequestTimeout: 50 * time.Millisecond})
	for i := range 2 {
		_, err := c.Call(context.Background(), "block", nil)
		var te *client.TimeoutError
		if !errors.As(err, &te) || te.Idle || te.After != 50*time.Millisecond || te.Method != protocol.MethodToolsCall || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("ping after the timeouts: %v", err)
	}
	_, err := c.GetPrompt(context.Background(), "block", nil)
	var te *client.TimeoutError
	if !errors.As(err, &te) || te.Method != protocol.MethodPromptsGet || te.After != 50*time.Millisecond {
		t.Errorf("prompts/get: %v", err)
	}
}

func TestLogsAndListChanged(t *testing.T) {
	leakcheck.Check(t)
	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		var mu sync.Mutex
		var logs []string
		changed := make(chan string, 4)
		s := testServer(nil)
		c := connect(t, s, &client.Options{
			ProtocolVersion: version,
			LogLevel:        protocol.LevelWarning,
			OnLog: func(p *protocol.LoggingMessageParams) {
				mu.Lock()
				logs = append(logs, fmt.Sprint(p.Data))
				mu.Unlock()
			},
			OnListChanged: func(method string) { changed <- method },
		})
		ctx := context.Background()
		if _, err := c.Call(ctx, "logs", nil); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if len(logs) != 1 || logs[0] != "error message" {
			t.Errorf("%s: logs %q", version, logs)
		}
		mu.Unlock()
		var sub *client.Subscription
		if c.Stateless() {
			var err error
			sub, err = c.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			if !sub.Acknowledged.ToolsListChanged {
				t.Errorf("acknowledged filter %+v", sub.Acknowledged)
			}
		}
		s.RemoveTools("logs")
		select {
		case m := <-changed:
			if m != protocol.NotificationToolsListChanged {
				t.Errorf("%s: notification %s", version, m)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no list_changed", version)
		}
		if sub != nil {
			sub.Close()
		}
	}
}

func TestResourceSubscription(t *testing.T) {
	leakcheck.Check(t)
	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		updated := make(chan string, 4)
		s := testServer(nil)
		c := connect(t, s, &client.Options{ProtocolVersion: version, OnResourceUpdated: func(uri string) { updated <- uri }})
		unsub, err := c.Subscribe(context.Background(), "test://r")
		if err != nil {
			t.Fatal(err)
		}
		s.ResourceUpdated(context.Background(), "test://other")
		s.ResourceUpdated(context.Background(), "test://r")
		select {
		case uri := <-updated:
			if uri != "test://r" {
				t.Errorf("%s: update of %s", version, uri)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no update", version)
		}
		if err := unsub(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

func TestCancellation(t *testing.T) {
	leakcheck.Check(t)
	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		c := connect(t, testServer(nil), &client.Options{ProtocolVersion: version})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		if _, err := c.Call(ctx, "block", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v", version, err)
		}
		// The connection is still usable.
		if res, err := c.Call(context.Background(), "echo", map[string]string{"message": "x"}); err != nil || res.Content[0].Text != "x" {
			t.Errorf("%s: after cancel: %v", version, err)
		}
	}
}

func TestStatelessMissingCapability(t *testing.T) {
	leakcheck.Check(t)
	c := connect(t, testServer(nil), &client.Options{ProtocolVersion: protocol.Version20260728})
	_, err := c.Call(context.Background(), "interview", nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeMissingRequiredClientCapability {
		t.Fatalf("got %v, want -32021", err)
	}
	var data protocol.MissingRequiredClientCapabilityData
	if json.Unmarshal(rpcErr.Data, &data) != nil || data.RequiredCapabilities.Elicitation == nil {
		t.Errorf("data %s", rpcErr.Data)
	}
}

func TestPagination(t *testing.T) {
	leakcheck.Check(t)
	s := testServer(&server.Options{PageSize: 2})
	c := connect(t, s, nil)
	first, err := c.ListTools(context.Background(), "")
	if err != nil || len(first.Tools) != 2 || first.NextCursor == "" {
		t.Fatalf("first page: %+v %v", first, err)
	}
	all, err := client.Collect(c.Tools(context.Background()))
	if err != nil || len(all) != 6 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Name >= all[i].Name {
			t.Errorf("not in order: %s, %s", all[i-1].Name, all[i].Name)
		}
	}
	if _, err := c.ListTools(context.Background(), "!!"); err == nil {
		t.Error("bad cursor accepted")
	}
}

func TestServerClosesSubscription(t *testing.T) {
	leakcheck.Check(t)
	s := testServer(nil)
	c := connect(t, s, &client.Options{ProtocolVersion: protocol.Version20260728})
	sub, err := c.Listen(context.Background(), protocol.SubscriptionFilter{PromptsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	select {
	case <-sub.Done():
		if sub.Err() != nil {
			t.Errorf("graceful end reported as %v", sub.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("subscription did not end")
	}
}
