package interop

// Interop with the official Go SDK v1.8.0, the other direction: ferry's
// client against the go-sdk server of interop/gosdkserver, served over
// stdio (the built command, launched by stdio.Command) and in-process
// (go-sdk's IOTransport over os.Pipe pairs), in every era.
//
// How the go-sdk v1.8.0 server takes each era (mcp/server.go
// ServerSession.handle, Server.discover, ServerSession.initialize):
//
//   - A request whose _meta carries io.modelcontextprotocol/protocolVersion
//     >= 2026-07-28 (with clientCapabilities) is served in the stateless era;
//     server/discover answers only such requests, listing every version
//     the server supports (ServerOptions.SupportedProtocolVersions, default
//     all five), so ferry's probe finds it stateless.
//   - initialize negotiates a legacy version: the one asked for when
//     supported, else the newest legacy one (never 2026-07-28).
//   - Its handlers ask the client for input by returning InputRequests;
//     for a stateless client that is an input_required result, for a legacy
//     session its middleware sends elicitation/create, sampling/createMessage
//     or roots/list itself and calls the handler again.
//
// Observed go-sdk v1.8.0 behaviour that ferry tolerates (no spec breach on
// ferry's side, asserted below so that a change shows):
//
//   - Tools keep outputSchema and structuredContent in 2024-11-05 and
//     2025-03-26, which do not define them (extra members; ferry's client
//     decodes them anyway).
//   - In legacy sessions, elicitation/create is sent in every revision,
//     including 2024-11-05 and 2025-03-26 which predate elicitation:
//     ServerSession.Elicit checks the client's declared capability, not the
//     negotiated version. ferry's client declares elicitation whatever
//     version it ends up with (it does not know it before initialize
//     answers) and answers such requests.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/interop/gosdkserver"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// ferryClientEras are the ways ferry's client meets the go-sdk server:
// detection (pin "") and each pinned revision, with the revision it must
// end up speaking.
var ferryClientEras = []struct {
	name string
	pin  string
	want string
}{
	// ferry probes with server/discover; go-sdk v1.8.0 answers it, so
	// ferry picks the stateless era.
	{"detect", "", protocol.Version20260728},
	{"2026-07-28", protocol.Version20260728, protocol.Version20260728},
	{"2025-11-25", protocol.Version20251125, protocol.Version20251125},
	{"2025-06-18", protocol.Version20250618, protocol.Version20250618},
	{"2025-03-26", protocol.Version20250326, protocol.Version20250326},
	{"2024-11-05", protocol.Version20241105, protocol.Version20241105},
}

// ferryClientRec is what the ferry client's callbacks saw.
type ferryClientRec struct {
	logs     gosdkRecorder[*protocol.LoggingMessageParams]
	updated  gosdkRecorder[string]
	elicit   gosdkRecorder[string]
	sampling gosdkRecorder[string]
	progress gosdkRecorder[protocol.ProgressParams]
	changed  gosdkRecorder[string]
}

func ferryClientOptions(pin string, rec *ferryClientRec) *client.Options {
	return &client.Options{
		Info:            protocol.Implementation{Name: "ferry-interop", Version: "0.1.0"},
		ProtocolVersion: pin,
		LogLevel:        protocol.LevelInfo,
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			var text string
			for _, m := range p.Messages {
				for _, c := range m.Content {
					text += c.Text
				}
			}
			rec.sampling.add(text)
			return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: "ferry-test-model",
				Content: protocol.SamplingContent{protocol.TextContent("Ferries carry things.")}}, nil
		},
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			rec.elicit.add(p.Message)
			return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			return []protocol.Root{{URI: "file:///work/ferry", Name: "ferry"}}, nil
		},
		OnLog:             func(p *protocol.LoggingMessageParams) { rec.logs.add(p) },
		OnResourceUpdated: func(uri string) { rec.updated.add(uri) },
		OnProgress:        func(p *protocol.ProgressParams) { rec.progress.add(*p) },
		OnListChanged:     func(method string) { rec.changed.add(method) },
	}
}

func TestGoSDKServerFerryClientStdio(t *testing.T) {
	bin := goSDKServerBinary(t)
	for _, era := range ferryClientEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rec := &ferryClientRec{}
			c, err := client.Connect(ctx, &stdio.Command{Path: bin}, ferryClientOptions(era.pin, rec))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			exerciseGoSDKServer(t, ctx, c, rec, era.want)
			exerciseGoSDKServerChanges(t, ctx, c, rec)
		})
	}
}

func TestGoSDKServerFerryClientInProcess(t *testing.T) {
	for _, era := range ferryClientEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			clientR, clientW, serverR, serverW := gosdkPipes(t)
			ss, err := gosdkserver.New().Connect(ctx, &mcp.IOTransport{Reader: serverR, Writer: serverW}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			rec := &ferryClientRec{}
			c, err := client.Connect(ctx, client.StreamTransport{Stream: stdio.NewServerStream(clientR, clientW, jsonrpc.Limits{})},
				ferryClientOptions(era.pin, rec))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			exerciseGoSDKServer(t, ctx, c, rec, era.want)
			exerciseGoSDKServerChanges(t, ctx, c, rec)
		})
	}
}

// exerciseGoSDKServer runs every feature of the go-sdk server through
// ferry's client c, which must speak want.
func exerciseGoSDKServer(t *testing.T, ctx context.Context, c *client.Client, rec *ferryClientRec, want string) {
	stateless := protocol.IsStateless(want)
	if c.ProtocolVersion() != want || c.Stateless() != stateless {
		t.Fatalf("ferry speaks %s (stateless %v), want %s", c.ProtocolVersion(), c.Stateless(), want)
	}
	if info := c.ServerInfo(); info.Name != gosdkserver.Name || info.Version != "1.8.0-interop" {
		t.Errorf("server info = %+v", info)
	}
	caps := c.ServerCapabilities()
	if caps.Tools == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil || caps.Logging == nil {
		t.Errorf("capabilities = %+v", caps)
	}
	if c.Instructions() != "go-sdk interop server" {
		t.Errorf("instructions = %q", c.Instructions())
	}
	if stateless && !slices.Equal(c.SupportedVersions(), mcp.SupportedProtocolVersions()) {
		t.Errorf("server/discover listed %v, want %v", c.SupportedVersions(), mcp.SupportedProtocolVersions())
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}

	call := func(t *testing.T, name string, args any) *protocol.CallToolResult {
		t.Helper()
		res, err := c.Call(ctx, name, args)
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		return res
	}

	t.Run("tools", func(t *testing.T) {
		// The server pages its lists 3 items at a time: the iterator
		// follows the cursors.
		tools, err := client.Collect(c.Tools(ctx))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		byName := map[string]protocol.Tool{}
		for _, tool := range tools {
			names = append(names, tool.Name)
			byName[tool.Name] = tool
		}
		wantNames := []string{"add", "ask_name", "countdown", "echo", "fail", "log", "roots", "set_late", "summarize", "touch", "weather"}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("tools = %v, want %v (in go-sdk's order, by name)", names, wantNames)
		}
		first, err := c.ListTools(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(first.Tools) != 3 || first.NextCursor == "" {
			t.Errorf("first page: %d tools, cursor %q; want 3 and a cursor", len(first.Tools), first.NextCursor)
		}
		var schema struct {
			Type       string                       `json:"type"`
			Properties map[string]map[string]string `json:"properties"`
			Required   []string                     `json:"required"`
		}
		if err := json.Unmarshal(byName["add"].InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		if schema.Type != "object" || schema.Properties["a"]["type"] != "integer" || schema.Properties["b"]["description"] != "second addend" ||
			!slices.Equal(schema.Required, []string{"a", "b"}) {
			t.Errorf("add input schema = %s", byName["add"].InputSchema)
		}
		if len(byName["weather"].OutputSchema) == 0 {
			t.Errorf("weather has no output schema in %s", want)
		}
	})

	t.Run("tools/call", func(t *testing.T) {
		if got := ferryText(t, call(t, "echo", map[string]string{"message": "hello from ferry"})); got != "hello from ferry" {
			t.Errorf("echo = %q", got)
		}
		add := call(t, "add", map[string]int{"a": 2, "b": 40})
		weather := call(t, "weather", struct {
			City string `json:"city"`
			Unit string `json:"unit"`
		}{"Oslo", "fahrenheit"})
		if got := ferryText(t, add); got != `{"sum":42}` {
			t.Errorf("add text = %q", got)
		}
		// Structured output exists since 2025-06-18; go-sdk sends it in
		// every revision.
		gosdkAssertJSON(t, "add structured", add.StructuredContent, `{"sum":42}`)
		gosdkAssertJSON(t, "weather structured", weather.StructuredContent,
			`{"city":"Oslo","temperature":64.4,"unit":"fahrenheit","conditions":"cloudy"}`)
		var out gosdkserver.WeatherOut
		if err := json.Unmarshal(weather.StructuredContent, &out); err != nil || out.Temperature != 64.4 {
			t.Errorf("weather structured content decodes to %+v, %v", out, err)
		}
		fail := call(t, "fail", nil)
		if !fail.IsError || ferryText(t, fail) != "go-sdk tool failure" {
			t.Errorf("fail = %+v", fail)
		}
		bad := call(t, "add", map[string]string{"a": "two"})
		if !bad.IsError || !strings.Contains(ferryText(t, bad), "validating") {
			t.Errorf("add with a string = %+v", bad)
		}
		_, err := c.Call(ctx, "no_such_tool", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, "unknown tool") {
			t.Errorf("unknown tool: err = %v", err)
		}
	})

	t.Run("progress", func(t *testing.T) {
		var seen gosdkRecorder[protocol.ProgressParams]
		pctx := client.WithProgress(ctx, func(p *protocol.ProgressParams) { seen.add(*p) })
		res, err := c.Call(pctx, "countdown", map[string]int{"steps": 4})
		if err != nil {
			t.Fatal(err)
		}
		if got := ferryText(t, res); got != "counted down 4 steps" {
			t.Errorf("countdown = %q", got)
		}
		gosdkWaitFor(t, 5*time.Second, "4 progress notifications", func() bool { return seen.len() >= 4 })
		for i, p := range seen.all() {
			if p.Progress != float64(i+1) || p.Total != 4 || p.Message != fmt.Sprintf("step %d of 4", i+1) || len(p.ProgressToken) == 0 {
				t.Errorf("progress %d = %+v", i, p)
			}
		}
		// Options.OnProgress sees the progress of every call, those
		// without WithProgress too.
		seen.reset()
		rec.progress.reset()
		if _, err := c.Call(ctx, "countdown", map[string]int{"steps": 2}); err != nil {
			t.Fatal(err)
		}
		gosdkWaitFor(t, 5*time.Second, "2 progress notifications", func() bool { return rec.progress.len() >= 2 })
		if seen.len() != 0 || rec.progress.len() != 2 {
			t.Errorf("progress: %v for WithProgress, %v for OnProgress", seen.all(), rec.progress.all())
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		rec.elicit.reset()
		res := call(t, "ask_name", nil)
		if got := ferryText(t, res); got != "Hello, Ada!" {
			t.Errorf("ask_name = %q (isError %v)", got, res.IsError)
		}
		if got := rec.elicit.all(); !slices.Equal(got, []string{"What is your name?"}) {
			t.Errorf("elicitations = %q", got)
		}
	})

	t.Run("sampling", func(t *testing.T) {
		rec.sampling.reset()
		res := call(t, "summarize", map[string]string{"text": "a long story"})
		if got := ferryText(t, res); got != "Ferries carry things. model=ferry-test-model" {
			t.Errorf("summarize = %q (isError %v)", got, res.IsError)
		}
		if got := rec.sampling.all(); !slices.Equal(got, []string{"Summarize: a long story"}) {
			t.Errorf("sampling requests = %q", got)
		}
	})

	t.Run("roots", func(t *testing.T) {
		res := call(t, "roots", nil)
		if got := ferryText(t, res); got != "1 root(s)\nfile:///work/ferry ferry" {
			t.Errorf("roots = %q (isError %v)", got, res.IsError)
		}
	})

	t.Run("resources", func(t *testing.T) {
		resources, err := client.Collect(c.Resources(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(resources) != 1 || resources[0].URI != gosdkserver.InfoURI || resources[0].MIMEType != "text/plain" {
			t.Fatalf("resources = %+v", resources)
		}
		r, err := c.ReadResource(ctx, gosdkserver.InfoURI)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != "served by the go-sdk" || r.Contents[0].URI != gosdkserver.InfoURI {
			t.Errorf("info = %+v", r.Contents)
		}
		_, err = c.ReadResource(ctx, "gosdk://missing")
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Errorf("reading a missing resource: err = %v, want a JSON-RPC error", err)
		}
	})

	t.Run("templates", func(t *testing.T) {
		templates, err := client.Collect(c.ResourceTemplates(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(templates) != 1 || templates[0].URITemplate != gosdkserver.ItemTemplate || templates[0].Name != "item" {
			t.Fatalf("templates = %+v", templates)
		}
		r, err := c.ReadResource(ctx, "gosdk://items/42")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != `{"id":"42"}` || r.Contents[0].MIMEType != "application/json" {
			t.Errorf("item 42 = %+v", r.Contents)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		prompts, err := client.Collect(c.Prompts(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if len(prompts) != 1 || prompts[0].Name != "greet" || len(prompts[0].Arguments) != 2 || !prompts[0].Arguments[0].Required {
			t.Fatalf("prompts = %+v", prompts)
		}
		got, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ferry", "style": "formal"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "A greeting" || len(got.Messages) != 1 || got.Messages[0].Role != protocol.RoleUser ||
			got.Messages[0].Content.Text != "Say a formal hello to Ferry." {
			t.Errorf("greet = %+v", got)
		}
	})

	t.Run("completion", func(t *testing.T) {
		res, err := c.Complete(ctx, &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefPrompt, Name: "greet"},
			Argument: protocol.CompleteArgument{Name: "style", Value: "f"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Completion.Values, []string{"formal", "friendly", "funny"}) || res.Completion.Total == nil || *res.Completion.Total != 3 {
			t.Errorf("style completions = %+v", res.Completion)
		}
		res, err = c.Complete(ctx, &protocol.CompleteParams{Ref: protocol.CompleteRef{Type: protocol.RefResource, URI: gosdkserver.ItemTemplate},
			Argument: protocol.CompleteArgument{Name: "id", Value: "ap"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Completion.Values, []string{"apple", "apricot"}) {
			t.Errorf("id completions = %+v", res.Completion)
		}
	})

	t.Run("logging", func(t *testing.T) {
		// Options.LogLevel is info: logging/setLevel after initialize
		// (legacy), the logLevel of every request (stateless).
		rec.logs.reset()
		for _, m := range []struct{ level, msg string }{{"debug", "below the level"}, {"warning", "from ferry"}} {
			if res := call(t, "log", map[string]string{"level": m.level, "message": m.msg}); ferryText(t, res) != "logged" {
				t.Fatalf("log = %+v", res)
			}
		}
		gosdkWaitFor(t, 5*time.Second, "the warning log message", func() bool { return rec.logs.len() >= 1 })
		logs := rec.logs.all()
		if len(logs) != 1 || logs[0].Level != protocol.LevelWarning || logs[0].Logger != "gosdk" || logs[0].Data != "from ferry" {
			t.Errorf("log messages = %+v", logs)
		}
		// Raise the level: warnings are no longer sent, errors are.
		if err := c.SetLogLevel(ctx, protocol.LevelError); err != nil {
			t.Fatal(err)
		}
		defer c.SetLogLevel(ctx, protocol.LevelInfo)
		rec.logs.reset()
		call(t, "log", map[string]string{"level": "warning", "message": "now below the level"})
		call(t, "log", map[string]string{"level": "error", "message": "an error"})
		gosdkWaitFor(t, 5*time.Second, "the error log message", func() bool { return rec.logs.len() >= 1 })
		if logs := rec.logs.all(); len(logs) != 1 || logs[0].Level != protocol.LevelError || logs[0].Data != "an error" {
			t.Errorf("log messages = %+v", logs)
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		rec.updated.reset()
		// Legacy: resources/subscribe. Stateless: a subscriptions/listen
		// stream, which Subscribe returns once go-sdk acknowledged it.
		unsubscribe, err := c.Subscribe(ctx, gosdkserver.InfoURI)
		if err != nil {
			t.Fatal(err)
		}
		if res := call(t, "touch", nil); ferryText(t, res) != "touched" {
			t.Fatalf("touch = %+v", res)
		}
		gosdkWaitFor(t, 5*time.Second, "notifications/resources/updated", func() bool { return rec.updated.len() >= 1 })
		if got := rec.updated.all(); !slices.Equal(got, []string{gosdkserver.InfoURI}) {
			t.Errorf("updated = %v", got)
		}
		if err := unsubscribe(ctx); err != nil {
			t.Fatal(err)
		}
		// After unsubscribing, an update is no longer delivered. The touch
		// call's answer follows its notification on the wire, so none
		// can arrive after it.
		rec.updated.reset()
		call(t, "touch", nil)
		if stateless {
			// The listen stream is ended by notifications/cancelled, which
			// the server handles on its own schedule: ask again until the
			// server no longer sends it.
			gosdkWaitFor(t, 5*time.Second, "the end of the subscription", func() bool {
				rec.updated.reset()
				call(t, "touch", nil)
				return rec.updated.len() == 0
			})
		} else if got := rec.updated.all(); len(got) != 0 {
			t.Errorf("updated after unsubscribing = %v", got)
		}
	})
}

// exerciseGoSDKServerChanges checks cancellation and list changes, which
// exerciseGoSDKServer leaves to it.
func exerciseGoSDKServerChanges(t *testing.T, ctx context.Context, c *client.Client, rec *ferryClientRec) {
	t.Run("cancellation", func(t *testing.T) {
		// ferry sends notifications/cancelled for a call its caller
		// abandons; the go-sdk cancels the handler, whose progress stops.
		rec.progress.reset()
		var seen gosdkRecorder[protocol.ProgressParams]
		cctx, ccancel := context.WithTimeout(client.WithProgress(ctx, func(p *protocol.ProgressParams) { seen.add(*p) }), 300*time.Millisecond)
		_, err := c.Call(cctx, "countdown", map[string]int{"steps": 100, "delayMs": 50})
		ccancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("abandoned call: err = %v, want a deadline error", err)
		}
		if n := gosdkWaitStable(t, rec.progress.len); n == 0 || n >= 100 {
			t.Errorf("%d progress notifications, want the countdown stopped part way", n)
		}
		if seen.len() == 0 || seen.len() > rec.progress.len() {
			t.Errorf("WithProgress saw %d notifications, OnProgress %d", seen.len(), rec.progress.len())
		}
		if got := ferryText(t, gosdkFerryCall(t, c, "echo", map[string]string{"message": "still here"})); got != "still here" {
			t.Errorf("echo after cancelling = %q", got)
		}
	})

	t.Run("list_changed", func(t *testing.T) {
		// Legacy: the go-sdk notifies every session. Stateless: only the
		// subscriptions/listen streams that asked for it.
		rec.changed.reset()
		var sub *client.Subscription
		if c.Stateless() {
			var err error
			sub, err = c.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if !sub.Acknowledged.ToolsListChanged {
				t.Errorf("acknowledged filter = %+v", sub.Acknowledged)
			}
		}
		if got := ferryText(t, gosdkFerryCall(t, c, "set_late", map[string]bool{"present": true})); got != "added" {
			t.Fatalf("set_late = %q", got)
		}
		const changed = "notifications/tools/list_changed"
		gosdkWaitFor(t, 5*time.Second, changed, func() bool { return slices.Contains(rec.changed.all(), changed) })
		tools, err := client.Collect(c.Tools(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(tools, func(tool protocol.Tool) bool { return tool.Name == gosdkserver.LateTool }) {
			t.Errorf("%d tools after the change, without %s", len(tools), gosdkserver.LateTool)
		}
		if got := ferryText(t, gosdkFerryCall(t, c, gosdkserver.LateTool, nil)); got != "late" {
			t.Errorf("late = %q", got)
		}
		if sub != nil {
			select {
			case m := <-sub.Events():
				if m.Method != changed {
					t.Errorf("subscription event %s, want %s", m.Method, changed)
				}
			case <-time.After(5 * time.Second):
				t.Error("no event on the subscription")
			}
		}
		rec.changed.reset()
		if got := ferryText(t, gosdkFerryCall(t, c, "set_late", map[string]bool{"present": false})); got != "removed" {
			t.Fatalf("set_late = %q", got)
		}
		gosdkWaitFor(t, 5*time.Second, changed+" after the removal", func() bool { return slices.Contains(rec.changed.all(), changed) })
	})
}

func gosdkFerryCall(t *testing.T, c *client.Client, name string, args any) *protocol.CallToolResult {
	t.Helper()
	res, err := c.Call(context.Background(), name, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// ferryText returns the only text content of a ferry tool result.
func ferryText(t *testing.T, res *protocol.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 || res.Content[0].Type != protocol.ContentText {
		t.Fatalf("content = %+v, want one text block", res.Content)
	}
	return res.Content[0].Text
}
