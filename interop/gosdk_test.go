package interop

// Interop with the official Go SDK, github.com/modelcontextprotocol/go-sdk
// v1.8.0, in both protocol eras. This file: the go-sdk client against
// ferry's servers (examples/everything over stdio, and an in-process
// mirror of it over OS pipes). gosdk_ferryclient_test.go has the other
// direction.
//
// How go-sdk v1.8.0 chooses the era (read from its source, mcp/client.go
// Client.Connect and mcp/shared.go):
//
//   - It knows 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26 and
//     2024-11-05 (supportedProtocolVersions); latestProtocolVersion is
//     2026-07-28.
//   - ClientSessionOptions.ProtocolVersion picks the version to ask for;
//     empty means the latest. A version >= 2026-07-28 makes the client send
//     server/discover first (with the _meta triple), retrying once with a
//     mutually supported stateless version named in an
//     UnsupportedProtocolVersionError; any other failure falls back to
//     initialize asking for 2025-11-25. An older version skips the probe
//     and sends initialize asking for exactly that version.
//   - On a stateless session every request carries the _meta triple
//     (injectRequestMeta); the per-request log level is not added by the
//     SDK, so a caller that wants log messages sets
//     io.modelcontextprotocol/logLevel in the request's Meta itself.
//
// So every era can be selected from the go-sdk side, and every one is
// exercised here.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	gosdkjsonrpc "github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// goSDKClientEras are the protocol versions the go-sdk client is asked to
// speak (ClientSessionOptions.ProtocolVersion) and the one it must end up
// with against ferry, which serves every revision.
var goSDKClientEras = []struct {
	name    string
	request string // "" = go-sdk's default
	want    string
}{
	{"default", "", protocol.Version20260728},
	{"2026-07-28", protocol.Version20260728, protocol.Version20260728},
	{"2025-11-25", protocol.Version20251125, protocol.Version20251125},
	{"2025-06-18", protocol.Version20250618, protocol.Version20250618},
	{"2025-03-26", protocol.Version20250326, protocol.Version20250326},
	{"2024-11-05", protocol.Version20241105, protocol.Version20241105},
}

// goSDKClientRec is what the go-sdk client's callbacks saw.
type goSDKClientRec struct {
	progress gosdkRecorder[*mcp.ProgressNotificationParams]
	logs     gosdkRecorder[*mcp.LoggingMessageParams]
	updated  gosdkRecorder[string]
	acks     gosdkRecorder[mcp.NotificationSubscriptions]
	elicit   gosdkRecorder[string]
	sampling gosdkRecorder[string]
	changed  gosdkRecorder[string]
}

func newGoSDKClient(rec *goSDKClientRec) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-interop", Version: goSDKVersion}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rec.elicit.add(req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		CreateMessageHandler: func(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var text string
			for _, m := range req.Params.Messages {
				if tc, ok := m.Content.(*mcp.TextContent); ok {
					text += tc.Text
				}
			}
			rec.sampling.add(text)
			return &mcp.CreateMessageResult{Role: "assistant", Model: "go-sdk-test-model",
				Content: &mcp.TextContent{Text: "A short summary."}}, nil
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			rec.progress.add(req.Params)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			rec.logs.add(req.Params)
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			rec.updated.add(req.Params.URI)
		},
		// With these set, a stateless go-sdk session opens a
		// subscriptions/listen stream for list changes when it connects.
		ToolListChangedHandler: func(ctx context.Context, req *mcp.ToolListChangedRequest) {
			rec.changed.add("tools")
		},
		PromptListChangedHandler: func(ctx context.Context, req *mcp.PromptListChangedRequest) {
			rec.changed.add("prompts")
		},
		ResourceListChangedHandler: func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
			rec.changed.add("resources")
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	// The SDK's own handler of notifications/subscriptions/acknowledged
	// does nothing visible; a receiving middleware lets the test see it.
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && method == "notifications/subscriptions/acknowledged" {
				rec.acks.add(p.Notifications)
			}
			return next(ctx, method, req)
		}
	})
	return c
}

func TestGoSDKClientFerryServerStdio(t *testing.T) {
	for _, era := range goSDKClientEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rec := &goSDKClientRec{}
			var stderr bytes.Buffer
			cmd := exec.Command(exampleServer)
			cmd.Stderr = &stderr
			cs, err := newGoSDKClient(rec).Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second},
				&mcp.ClientSessionOptions{ProtocolVersion: era.request})
			if err != nil {
				t.Fatalf("connect: %v (server stderr: %s)", err, stderr.String())
			}
			defer cs.Close()
			exerciseFerryServer(t, ctx, cs, rec, era.want, nil)
		})
	}
}

func TestGoSDKClientFerryServerInProcess(t *testing.T) {
	for _, era := range goSDKClientEras {
		t.Run(era.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			clientR, clientW, serverR, serverW := gosdkPipes(t)
			fx := newFerryEverything()
			conn := fx.srv.Connect(ctx, stdio.NewServerStream(serverR, serverW, jsonrpc.Limits{}))
			defer func() {
				conn.Close()
				conn.Wait()
			}()

			rec := &goSDKClientRec{}
			cs, err := newGoSDKClient(rec).Connect(ctx, &mcp.IOTransport{Reader: clientR, Writer: clientW},
				&mcp.ClientSessionOptions{ProtocolVersion: era.request})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			exerciseFerryServer(t, ctx, cs, rec, era.want, fx)
		})
	}
}

// exerciseFerryServer runs every feature of ferry's everything server
// through the go-sdk client session cs, which must have negotiated want.
// fx, when not nil, is the in-process server: the test changes its lists,
// sends resource updates and sees its handlers' cancellation.
func exerciseFerryServer(t *testing.T, ctx context.Context, cs *mcp.ClientSession, rec *goSDKClientRec, want string, fx *ferryFixture) {
	stateless := protocol.IsStateless(want)
	structured := protocol.AtLeast(want, protocol.Version20250618)

	ir := cs.InitializeResult()
	if ir == nil || ir.ProtocolVersion != want {
		t.Fatalf("negotiated %+v, want protocol version %s", ir, want)
	}
	if ir.ServerInfo == nil || ir.ServerInfo.Name != "ferry-everything" {
		t.Errorf("server info = %+v, want ferry-everything", ir.ServerInfo)
	}
	if ir.Capabilities == nil || ir.Capabilities.Tools == nil || ir.Capabilities.Resources == nil || ir.Capabilities.Prompts == nil {
		t.Errorf("capabilities = %+v, want tools, resources and prompts", ir.Capabilities)
	}
	// ping is gone in 2026-07-28, but go-sdk v1.8.0 still sends it (without
	// _meta) on a stateless session; ferry answers it in every era.
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}

	// meta is the _meta of calls that want log messages: the stateless era
	// asks per request (the go-sdk does not add it by itself).
	meta := func(level string) mcp.Meta {
		if !stateless {
			return nil
		}
		return mcp.Meta{protocol.MetaLogLevel: level}
	}
	call := func(t *testing.T, name string, args any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		return res
	}

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		tools := map[string]*mcp.Tool{}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			tools[tool.Name] = tool
			// The go-sdk takes schemas as they come; check that its own
			// JSON Schema library (jsonschema-go) accepts ferry's.
			s := goSDKSchema(t, tool.Name, tool.InputSchema)
			if s.Type != "object" {
				t.Errorf("%s: input schema type %q, want object", tool.Name, s.Type)
			}
		}
		slices.Sort(names)
		wantNames := []string{"add", "ask_name", "countdown", "echo", "fail", "log", "roots", "summarize", "weather"}
		if !slices.Equal(names, wantNames) {
			t.Fatalf("tools = %v, want %v", names, wantNames)
		}
		add := goSDKSchema(t, "add", tools["add"].InputSchema)
		if add.Properties["a"] == nil || add.Properties["a"].Type != "number" || !slices.Contains(add.Required, "b") {
			t.Errorf("add input schema = %s", gosdkJSON(t, tools["add"].InputSchema))
		}
		cd := goSDKSchema(t, "countdown", tools["countdown"].InputSchema)
		if p := cd.Properties["steps"]; p == nil || p.Minimum == nil || *p.Minimum != 1 || p.Maximum == nil || *p.Maximum != 100 {
			t.Errorf("countdown input schema = %s", gosdkJSON(t, tools["countdown"].InputSchema))
		}
		if structured != (tools["weather"].OutputSchema != nil) {
			t.Errorf("weather output schema = %v in %s", tools["weather"].OutputSchema, want)
		}
		annotated := protocol.AtLeast(want, protocol.Version20250326)
		if got := tools["echo"].Annotations != nil && tools["echo"].Annotations.ReadOnlyHint; got != annotated {
			t.Errorf("echo readOnlyHint = %v in %s, want %v", got, want, annotated)
		}
		if structured {
			// Validate weather's structured output against its output
			// schema with the go-sdk's library.
			res := call(t, "weather", map[string]any{"city": "Lyon"})
			out := goSDKSchema(t, "weather output", tools["weather"].OutputSchema)
			resolved, err := out.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(gosdkJSON(t, res.StructuredContent), &v); err != nil {
				t.Fatal(err)
			}
			if err := resolved.Validate(v); err != nil {
				t.Errorf("weather structured content %s does not match its output schema: %v", gosdkJSON(t, res.StructuredContent), err)
			}
		}
	})

	t.Run("tools/call", func(t *testing.T) {
		if got := goSDKText(t, call(t, "echo", map[string]any{"message": "hello from the go-sdk"})); got != "hello from the go-sdk" {
			t.Errorf("echo = %q", got)
		}
		add := call(t, "add", map[string]any{"a": 2, "b": 3.5})
		if got := goSDKText(t, add); got != `{"sum":5.5}` {
			t.Errorf("add text = %q", got)
		}
		weather := call(t, "weather", map[string]any{"city": "Paris", "unit": "fahrenheit"})
		if structured {
			gosdkAssertJSON(t, "add structured", add.StructuredContent, `{"sum":5.5}`)
			gosdkAssertJSON(t, "weather structured", weather.StructuredContent,
				`{"city":"Paris","temperature":70.7,"unit":"fahrenheit","conditions":"sunny"}`)
		} else if add.StructuredContent != nil || weather.StructuredContent != nil {
			t.Errorf("structuredContent sent in %s: %v %v", want, add.StructuredContent, weather.StructuredContent)
		}
		fail := call(t, "fail", nil)
		if !fail.IsError || goSDKText(t, fail) != "this tool always fails" {
			t.Errorf("fail = %+v", fail)
		}
		// Arguments that break the input schema are a tool error.
		bad := call(t, "add", map[string]any{"a": "two"})
		if !bad.IsError || !strings.Contains(goSDKText(t, bad), "invalid arguments") {
			t.Errorf("add with a string = %+v", bad)
		}
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"})
		if err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("unknown tool: err = %v", err)
		}
	})

	t.Run("progress", func(t *testing.T) {
		rec.progress.reset()
		token := "countdown-" + want
		p := &mcp.CallToolParams{Name: "countdown", Arguments: map[string]any{"steps": 3, "delayMs": 1}}
		p.SetProgressToken(token)
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := goSDKText(t, res); got != "counted down 3 steps" {
			t.Errorf("countdown = %q", got)
		}
		gosdkWaitFor(t, 5*time.Second, "3 progress notifications", func() bool { return rec.progress.len() >= 3 })
		for i, n := range rec.progress.all() {
			if n.ProgressToken != token || n.Progress != float64(i+1) || n.Total != 3 || n.Message != fmt.Sprintf("step %d of 3", i+1) {
				t.Errorf("progress %d = %+v", i, n)
			}
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		rec.elicit.reset()
		if !protocol.AtLeast(want, protocol.Version20250618) {
			// Elicitation came with 2025-06-18: ferry does not ask an
			// older client, whatever capabilities it declared, and says
			// so with the protocol error of a missing capability.
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_name"})
			var rpcErr *gosdkjsonrpc.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32021 || rec.elicit.len() != 0 {
				t.Errorf("ask_name in %s = %+v, %v, elicitations %v", want, res, err, rec.elicit.all())
			}
			return
		}
		res := call(t, "ask_name", nil)
		if got := goSDKText(t, res); got != "Hello, Ada!" {
			t.Errorf("ask_name = %q (isError %v)", got, res.IsError)
		}
		if got := rec.elicit.all(); !slices.Equal(got, []string{"What is your name?"}) {
			t.Errorf("elicitations = %q", got)
		}
	})

	t.Run("sampling", func(t *testing.T) {
		rec.sampling.reset()
		res := call(t, "summarize", map[string]any{"text": "MCP connects models to tools."})
		if got := goSDKText(t, res); got != "A short summary." {
			t.Errorf("summarize = %q (isError %v)", got, res.IsError)
		}
		if got := rec.sampling.all(); len(got) != 1 || got[0] != "Summarize in one sentence:\nMCP connects models to tools." {
			t.Errorf("sampling requests = %q", got)
		}
	})

	t.Run("roots", func(t *testing.T) {
		res := call(t, "roots", nil)
		if got := goSDKText(t, res); got != "1 root(s)\nfile:///work/project project" {
			t.Errorf("roots = %q (isError %v)", got, res.IsError)
		}
	})

	t.Run("resources", func(t *testing.T) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if !slices.Equal(uris, []string{"ferry://logo.png", "ferry://readme"}) && !slices.Equal(uris, []string{"ferry://readme", "ferry://logo.png"}) {
			t.Errorf("resources = %v", uris)
		}
		readme, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ferry://readme"})
		if err != nil {
			t.Fatal(err)
		}
		if len(readme.Contents) != 1 || readme.Contents[0].MIMEType != "text/markdown" || !strings.HasPrefix(readme.Contents[0].Text, "# ferry everything\n") {
			t.Errorf("readme = %+v", readme.Contents)
		}
		logo, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ferry://logo.png"})
		if err != nil {
			t.Fatal(err)
		}
		if len(logo.Contents) != 1 || !bytes.HasPrefix(logo.Contents[0].Blob, []byte("\x89PNG\r\n")) {
			t.Errorf("logo = %+v", logo.Contents)
		}
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ferry://missing"})
		if err == nil {
			t.Error("reading a missing resource succeeded")
		}
	})

	t.Run("templates", func(t *testing.T) {
		res, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ResourceTemplates) != 1 || res.ResourceTemplates[0].URITemplate != "ferry://greeting/{name}" || res.ResourceTemplates[0].Name != "greeting" {
			t.Fatalf("templates = %+v", res.ResourceTemplates)
		}
		r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ferry://greeting/gopher"})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != "Hello, gopher!" || r.Contents[0].URI != "ferry://greeting/gopher" {
			t.Errorf("greeting = %+v", r.Contents)
		}
	})

	t.Run("prompts", func(t *testing.T) {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		prompts := map[string]*mcp.Prompt{}
		for _, p := range res.Prompts {
			prompts[p.Name] = p
		}
		review := prompts["review"]
		if len(prompts) != 2 || prompts["simple"] == nil || review == nil || len(review.Arguments) != 2 ||
			review.Arguments[0].Name != "language" || !review.Arguments[0].Required || review.Arguments[1].Required {
			t.Fatalf("prompts = %s", gosdkJSON(t, res.Prompts))
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "go", "style": "thorough"}})
		if err != nil {
			t.Fatal(err)
		}
		if got.Description != "Code review" || len(got.Messages) != 2 {
			t.Fatalf("review = %s", gosdkJSON(t, got))
		}
		if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Please give a thorough review of my go code." || got.Messages[0].Role != "user" {
			t.Errorf("review message 0 = %s", gosdkJSON(t, got.Messages[0]))
		}
		if er, ok := got.Messages[1].Content.(*mcp.EmbeddedResource); !ok || er.Resource == nil || er.Resource.URI != "ferry://readme" || er.Resource.Text != "# ferry everything" {
			t.Errorf("review message 1 = %s", gosdkJSON(t, got.Messages[1]))
		}
		_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "review"})
		if err == nil {
			t.Error("review without its required argument succeeded")
		}
	})

	t.Run("completion", func(t *testing.T) {
		res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "review"},
			Argument: mcp.CompleteParamsArgument{Name: "language", Value: "py"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Completion.Values, []string{"python"}) {
			t.Errorf("language completions = %v", res.Completion.Values)
		}
		res, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "ferry://greeting/{name}"},
			Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Completion.Values, []string{"alice"}) {
			t.Errorf("name completions = %v", res.Completion.Values)
		}
	})

	t.Run("logging", func(t *testing.T) {
		rec.logs.reset()
		if stateless {
			// logging/setLevel is gone in 2026-07-28 ("Remove ping,
			// logging/setLevel ... Log level is now set per-request"), yet
			// go-sdk v1.8.0 still sends it, without _meta; ferry rejects
			// it as a request of neither era.
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err == nil {
				t.Error("logging/setLevel on a stateless session succeeded")
			}
		} else if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
		for _, m := range []struct{ level, msg string }{{"debug", "below the level"}, {"warning", "from the go-sdk"}} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta("info"), Name: "log",
				Arguments: map[string]any{"level": m.level, "message": m.msg}})
			if err != nil || goSDKText(t, res) != "logged" {
				t.Fatalf("log: %v %+v", err, res)
			}
		}
		gosdkWaitFor(t, 5*time.Second, "the warning log message", func() bool { return rec.logs.len() >= 1 })
		logs := rec.logs.all()
		if len(logs) != 1 || logs[0].Level != "warning" || logs[0].Logger != "everything" || logs[0].Data != "from the go-sdk" {
			t.Errorf("log messages = %s", gosdkJSON(t, logs))
		}
		if stateless {
			// A stateless request without a log level gets no log messages.
			rec.logs.reset()
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"level": "error", "message": "unasked"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta("error"), Name: "log", Arguments: map[string]any{"level": "error", "message": "asked"}}); err != nil {
				t.Fatal(err)
			}
			gosdkWaitFor(t, 5*time.Second, "the asked-for log message", func() bool { return rec.logs.len() >= 1 })
			if logs := rec.logs.all(); len(logs) != 1 || logs[0].Data != "asked" {
				t.Errorf("log messages = %s", gosdkJSON(t, logs))
			}
		}
	})

	t.Run("subscribe", func(t *testing.T) {
		rec.updated.reset()
		const uri = "ferry://readme"
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		if stateless {
			// go-sdk opens a subscriptions/listen stream for the URI and
			// returns at once; wait for ferry's acknowledgement.
			gosdkWaitFor(t, 5*time.Second, "notifications/subscriptions/acknowledged", func() bool {
				return slices.ContainsFunc(rec.acks.all(), func(n mcp.NotificationSubscriptions) bool {
					return slices.Equal(n.ResourceSubscriptions, []string{uri})
				})
			})
		}
		if fx != nil {
			fx.srv.ResourceUpdated(ctx, uri)
			fx.srv.ResourceUpdated(ctx, "ferry://logo.png") // not subscribed
			gosdkWaitFor(t, 5*time.Second, "notifications/resources/updated", func() bool { return rec.updated.len() >= 1 })
			if got := rec.updated.all(); !slices.Equal(got, []string{uri}) {
				t.Errorf("updated = %v", got)
			}
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("cancellation", func(t *testing.T) {
		// A call abandoned by its caller is cancelled on the server:
		// go-sdk sends notifications/cancelled, ferry cancels the
		// handler's context, and the progress stops.
		rec.progress.reset()
		p := &mcp.CallToolParams{Name: "countdown", Arguments: map[string]any{"steps": 100, "delayMs": 50}}
		p.SetProgressToken("cancel-me")
		cctx, ccancel := context.WithTimeout(ctx, 300*time.Millisecond)
		_, err := cs.CallTool(cctx, p)
		ccancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("abandoned call: err = %v, want a deadline error", err)
		}
		if n := gosdkWaitStable(t, rec.progress.len); n == 0 || n >= 100 {
			t.Errorf("%d progress notifications, want the countdown stopped part way", n)
		}
		if fx != nil {
			gosdkWaitFor(t, 5*time.Second, "the countdown handler to see the cancellation", func() bool { return fx.countdownCancelled.len() == 1 })
			// ferry's cause carries the reason of go-sdk's
			// notifications/cancelled (its context's error).
			if err := fx.countdownCancelled.all()[0]; err == nil || !strings.Contains(err.Error(), "cancelled by the peer: context deadline exceeded") {
				t.Errorf("countdown ended with %v, want go-sdk's cancellation", err)
			}
		}
		if got := goSDKText(t, call(t, "echo", map[string]any{"message": "still here"})); got != "still here" {
			t.Errorf("echo after cancelling = %q", got)
		}
	})

	if fx != nil {
		srv := fx.srv
		t.Run("list_changed", func(t *testing.T) {
			if stateless {
				gosdkWaitFor(t, 5*time.Second, "the list-change subscription go-sdk opened at connect", func() bool {
					return slices.ContainsFunc(rec.acks.all(), func(n mcp.NotificationSubscriptions) bool {
						return n.ToolsListChanged && n.PromptsListChanged && n.ResourcesListChanged
					})
				})
			}
			rec.changed.reset()
			server.AddTool(srv, &protocol.Tool{Name: "late", Description: "Added late"},
				func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "late", nil })
			gosdkWaitFor(t, 5*time.Second, "notifications/tools/list_changed", func() bool { return slices.Contains(rec.changed.all(), "tools") })
			// The notification invalidates go-sdk's list cache (stateless).
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "late" }) {
				t.Errorf("tools after the change: %d, without late", len(res.Tools))
			}
			if got := goSDKText(t, call(t, "late", nil)); got != "late" {
				t.Errorf("late = %q", got)
			}
			srv.RemoveTools("late")
			srv.AddPrompt(&protocol.Prompt{Name: "late"}, func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
				return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("late")}}}, nil
			})
			srv.RemovePrompts("late")
			srv.RemoveResources("ferry://logo.png")
			gosdkWaitFor(t, 5*time.Second, "prompts and resources list_changed", func() bool {
				got := rec.changed.all()
				return slices.Contains(got, "prompts") && slices.Contains(got, "resources")
			})
		})
	}
}

// gosdkWaitStable polls n until it stops growing for 300ms (bounded by 5s) and
// returns its value.
func gosdkWaitStable(t *testing.T, n func() int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	last := n()
	for time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
		cur := n()
		if cur == last {
			return cur
		}
		last = cur
	}
	t.Fatalf("still growing after 5s: %d", last)
	return last
}

// goSDKSchema decodes a schema as the go-sdk's JSON Schema library
// (jsonschema-go) sees it, and checks that it resolves.
func goSDKSchema(t *testing.T, what string, v any) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(gosdkJSON(t, v), &s); err != nil {
		t.Fatalf("%s: schema rejected by jsonschema-go: %v", what, err)
	}
	if _, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		t.Fatalf("%s: schema %s does not resolve with jsonschema-go: %v", what, gosdkJSON(t, v), err)
	}
	return &s
}

// goSDKText returns the only text content of a go-sdk tool result.
func goSDKText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content = %s, want one text block", gosdkJSON(t, res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content = %T, want text", res.Content[0])
	}
	return tc.Text
}

func gosdkJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// gosdkAssertJSON compares a value with the JSON it must marshal to, ignoring
// member order.
func gosdkAssertJSON(t *testing.T, what string, got any, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(gosdkJSON(t, got), &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gosdkJSON(t, g), gosdkJSON(t, w)) {
		t.Errorf("%s = %s, want %s", what, gosdkJSON(t, got), want)
	}
}
