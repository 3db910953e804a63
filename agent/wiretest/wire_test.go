package wiretest

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/wiretest/fakemodel"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ollama/ollama/api"
)

// raw decodes an exchange's provider-format body.
func raw(t *testing.T, ex fakemodel.Exchange) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ex.Raw, &m); err != nil {
		t.Fatalf("%s: %v", ex.Path, err)
	}
	return m
}

// toolResultsOnTheWire returns the tool results of a request as its
// provider sent them: OpenAI "tool" messages, or the tool_result blocks
// of Anthropic's last user message (checking that they come first).
func toolResultsOnTheWire(t *testing.T, p string, body map[string]any) []map[string]any {
	t.Helper()
	msgs := body["messages"].([]any)
	var out []map[string]any
	if p == "openai" {
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i].(map[string]any)
			if m["role"] == "assistant" {
				if len(m["tool_calls"].([]any)) != len(out) {
					t.Errorf("%d tool calls answered by %d tool messages", len(m["tool_calls"].([]any)), len(out))
				}
				break
			}
			if m["role"] == "tool" {
				out = append([]map[string]any{m}, out...)
			}
		}
		return out
	}
	last := msgs[len(msgs)-1].(map[string]any)
	if last["role"] != "user" {
		t.Fatalf("the last message is %v", last["role"])
	}
	for i, b := range last["content"].([]any) {
		blk := b.(map[string]any)
		if blk["type"] != "tool_result" {
			if i < len(out) {
				t.Errorf("a %v block before the tool results", blk["type"])
			}
			continue
		}
		if i != len(out) {
			t.Errorf("tool_result block %d after another block", i)
		}
		out = append(out, blk)
	}
	return out
}

func TestMemoryCreateThenReadBack(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		mem := nodeServer(t, "memory", "@modelcontextprotocol/server-memory",
			map[string]string{"MEMORY_FILE_PATH": filepath.Join(t.TempDir(), "memory.jsonl")})
		h := startHost(t, []*config.Server{mem}, nil)
		var tr transcript
		a := &agent.Agent{Model: p.model, Tools: h, Policy: &agent.Policy{Mode: agent.Auto}, OnEvent: tr.event}
		ctx := context.Background()
		res, err := a.Run(ctx, agent.Text(`call create_entities {"entities":[{"name":"Ferry","entityType":"project","observations":["speaks MCP in Go"]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Calls) != 1 || res.Calls[0].Name != "memory__create_entities" || res.Calls[0].IsError {
			t.Fatalf("calls %+v", res.Calls)
		}
		res, err = a.Run(ctx, agent.Text(`call open_nodes {"names":["Ferry"]}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "speaks MCP in Go") || !strings.HasPrefix(res.Answer, "memory__open_nodes returned:") {
			t.Errorf("answer %q", res.Answer)
		}
		t.Logf("%s transcript:\n%s", p.name, tr.b.String())
		ex := fake.Exchanges()
		if len(ex) != 4 {
			t.Fatalf("%d model requests", len(ex))
		}
		// The read-back request carries the whole conversation, every
		// tool call answered.
		results := toolResultsOnTheWire(t, p.name, raw(t, ex[3]))
		if len(results) != 1 {
			t.Fatalf("results %v", results)
		}
		if id := results[0]["tool_call_id"]; p.name == "openai" && id != "call_2" {
			t.Errorf("tool_call_id %v", id)
		}
		if id := results[0]["tool_use_id"]; p.name == "anthropic" && id != "call_2" {
			t.Errorf("tool_use_id %v", id)
		}
		// And the middleware read it back into a conversation.
		if got := fakemodel.Read(ex[3].Chat); len(got.Results) != 1 || !strings.Contains(got.Results[0].Content, "speaks MCP in Go") {
			t.Errorf("the model saw %+v", got.Results)
		}
		if tools := ex[0].Chat.Tools; len(tools) < 5 {
			t.Errorf("the model got %d tools", len(tools))
		}
	})
}

// server-everything lists trigger-sampling-request only to clients that
// declare sampling; the agent answers its request with its own model,
// without the host's tools.
func TestEverythingSampling(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		var tr transcript
		a := &agent.Agent{Model: p.model, ModelName: p.name + "/fake", Policy: &agent.Policy{Mode: agent.Auto}, OnEvent: tr.event}
		h := hostFor(t, a, []*config.Server{nodeServer(t, "everything", "@modelcontextprotocol/server-everything", nil)}, nil, "")
		a.Tools = h
		waitForTool(t, h, "everything__trigger-sampling-request")
		res, err := a.Run(context.Background(), agent.Text(`call trigger-sampling-request {"prompt":"a haiku about ferries","maxTokens":40}`))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s transcript:\n%s", p.name, tr.b.String())
		for _, want := range []string{"sampled: Resource trigger-sampling-request context: a haiku about ferries", `"stopReason": "endTurn"`, `"model": "fake`} {
			if !strings.Contains(res.Answer, want) {
				t.Errorf("the answer lacks %q:\n%s", want, res.Answer)
			}
		}
		ex := fake.Exchanges()
		if len(ex) != 3 {
			t.Fatalf("%d model requests", len(ex))
		}
		sampling := raw(t, ex[1])
		if _, ok := sampling["tools"]; ok || len(ex[1].Chat.Tools) != 0 {
			t.Errorf("the sampling request carried tools: %v", sampling["tools"])
		}
		if sampling["max_tokens"] != float64(40) || sampling["temperature"] != 0.7 {
			t.Errorf("sampling request %v", sampling)
		}
		if got := fakemodel.Read(ex[1].Chat).System; got != "You are a helpful test server." {
			t.Errorf("system prompt %q", got)
		}
		// Roots come from the client's callback.
		res, err = a.Run(context.Background(), agent.Text(`call get-roots-list`))
		if err != nil || !strings.Contains(res.Answer, "file://") || !strings.Contains(res.Answer, "work") {
			t.Errorf("roots: %v %q", err, res.Answer)
		}
	})
}

func TestEverythingElicitation(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		var asked []string
		var mu sync.Mutex
		elicit := func(server string) client.Options {
			return client.Options{Elicitation: func(ctx context.Context, e *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				mu.Lock()
				asked = append(asked, server+": "+e.Message)
				mu.Unlock()
				return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7}}, nil
			}}
		}
		a := &agent.Agent{Model: p.model, Policy: &agent.Policy{Mode: agent.Auto}}
		h := hostFor(t, a, []*config.Server{nodeServer(t, "everything", "@modelcontextprotocol/server-everything", nil)}, elicit, "")
		a.Tools = h
		waitForTool(t, h, "everything__trigger-elicitation-request")
		res, err := a.Run(context.Background(), agent.Text(`call trigger-elicitation-request`))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"User provided the requested information", "Name: Ada Lovelace", "Favorite Integer: 7"} {
			if !strings.Contains(res.Answer, want) {
				t.Errorf("the answer lacks %q:\n%s", want, res.Answer)
			}
		}
		if len(asked) != 1 || asked[0] != "everything: Please provide inputs for the following fields:" {
			t.Errorf("asked %v", asked)
		}
	})
}

// ferry's example server in the stateless era (2026-07-28): sampling and
// elicitation arrive as input_required results and are answered on the
// retry.
func TestStatelessEraSamplingAndElicitation(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		elicit := func(server string) client.Options {
			return client.Options{Elicitation: func(ctx context.Context, e *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Grace"}}, nil
			}}
		}
		a := &agent.Agent{Model: p.model, Policy: &agent.Policy{Mode: agent.Auto}}
		h := hostFor(t, a, []*config.Server{binServer("ferry", everythingBin, nil)}, elicit, "")
		a.Tools = h
		s, _ := h.Server("ferry")
		if st := s.Status(); !st.Stateless || st.Version != protocol.LatestVersion {
			t.Fatalf("the example server speaks %s (stateless %v)", st.Version, st.Stateless)
		}
		res, err := a.Run(context.Background(), agent.Text(`call summarize {"text":"Ferries carry cars across the water."} and call ask_name`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "ferry__summarize returned: sampled: Summarize in one sentence:") ||
			!strings.Contains(res.Answer, "ferry__ask_name returned: Hello, Grace!") {
			t.Errorf("answer:\n%s", res.Answer)
		}
	})
}

// An image from a tool reaches the model: inside the tool_result for
// Anthropic, in a user message after the tool messages for OpenAI (whose
// tool messages hold only text).
func TestImagesReachTheModel(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		h := startHost(t, []*config.Server{nodeServer(t, "everything", "@modelcontextprotocol/server-everything", nil)}, nil)
		a := &agent.Agent{Model: p.model, Tools: h, Policy: &agent.Policy{Mode: agent.Auto}}
		res, err := a.Run(context.Background(), agent.Text(`call get-tiny-image`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "I see 1 image(s)") {
			t.Errorf("answer %q", res.Answer)
		}
		body := raw(t, fake.Exchanges()[1])
		msgs := body["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		switch p.name {
		case "openai":
			parts := last["content"].([]any)
			if last["role"] != "user" || !strings.HasPrefix(parts[1].(map[string]any)["image_url"].(map[string]any)["url"].(string), "data:image/png;base64,") {
				t.Errorf("last message %v", last)
			}
		case "anthropic":
			blk := last["content"].([]any)[0].(map[string]any)
			var hasImage bool
			for _, c := range blk["content"].([]any) {
				hasImage = hasImage || c.(map[string]any)["type"] == "image"
			}
			if blk["type"] != "tool_result" || !hasImage {
				t.Errorf("tool result %v", blk)
			}
		}
	})
}

// Two calls of one reply: both answered in the next request, in the
// form each API wants.
func TestParallelCallsOnTheWire(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		h := startHost(t, []*config.Server{nodeServer(t, "everything", "@modelcontextprotocol/server-everything", nil)}, nil)
		a := &agent.Agent{Model: p.model, Tools: h, Policy: &agent.Policy{Mode: agent.Auto}}
		res, err := a.Run(context.Background(), agent.Text(`call echo {"message":"one"} and call get-sum {"a":2,"b":3}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Answer, "everything__echo returned: Echo: one") || !strings.Contains(res.Answer, "everything__get-sum returned: The sum of 2 and 3 is 5") {
			t.Errorf("answer %q", res.Answer)
		}
		results := toolResultsOnTheWire(t, p.name, raw(t, fake.Exchanges()[1]))
		if len(results) != 2 {
			t.Fatalf("results %v", results)
		}
		if p.name == "anthropic" && (results[0]["tool_use_id"] != "call_1" || results[1]["tool_use_id"] != "call_2") {
			t.Errorf("results %v", results)
		}
		if p.name == "openai" && (results[0]["tool_call_id"] != "call_1" || results[1]["tool_call_id"] != "call_2") {
			t.Errorf("results %v", results)
		}
	})
}

// Cancelling a turn in the middle of a long call sends
// notifications/cancelled to the server and gives the model a result
// for the call; progress is reported while the call runs.
func TestCancelALongCall(t *testing.T) {
	eachProvider(t, fakemodel.Directives, func(t *testing.T, p provider, fake *fakemodel.Server) {
		// The cancellations of the tools/call: on a loaded machine the
		// host may also give up its server/discover probe, and says so
		// with a notifications/cancelled of its own.
		var mu sync.Mutex
		var cancelled []string
		calls := map[string]bool{}
		h := startHost(t, []*config.Server{nodeServer(t, "everything", "@modelcontextprotocol/server-everything", nil)}, &host.Options{
			Trace: func(e *host.TraceEvent) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case e.Out && e.Kind == "request" && e.Method == "tools/call":
					calls[e.ID] = true
				case e.Out && e.Method == "notifications/cancelled":
					var n struct {
						Params struct {
							RequestID json.RawMessage `json:"requestId"`
						} `json:"params"`
					}
					if json.Unmarshal(e.Message, &n) == nil && calls[string(n.Params.RequestID)] {
						cancelled = append(cancelled, string(e.Message))
					}
				}
			},
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		progress := 0
		a := &agent.Agent{Model: p.model, Tools: h, Policy: &agent.Policy{Mode: agent.Auto}, OnEvent: func(e agent.Event) {
			if e.Kind == agent.EventToolProgress {
				progress++
				cancel()
			}
		}}
		start := time.Now()
		res, err := a.Run(ctx, agent.Text(`call trigger-long-running-operation {"duration":30,"steps":30}`))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("the turn took %v to stop", took)
		}
		if progress == 0 || !strings.Contains(res.Calls[0].Error, "cancelled by the user") {
			t.Errorf("progress %d, call %+v", progress, res.Calls[0])
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			n := len(cancelled)
			mu.Unlock()
			if n > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if len(cancelled) != 1 || !strings.Contains(cancelled[0], `"requestId"`) {
			t.Errorf("notifications/cancelled sent: %v", cancelled)
		}
		// The conversation goes on.
		res, err = a.Run(context.Background(), agent.Text(`call echo {"message":"still here"}`))
		if err != nil || !strings.Contains(res.Answer, "Echo: still here") {
			t.Errorf("next turn: %v %q", err, res.Answer)
		}
	})
}

// The flow of the seeds: a ReAct agent on the 12306 server answers
// "which trains go from Beijing to Shanghai tomorrow" through the
// server's tools (a stand-in with a made-up timetable, written with
// ferry's server library).
func Test12306Flow(t *testing.T) {
	eachProvider(t, fakemodel.Train12306, func(t *testing.T, p provider, fake *fakemodel.Server) {
		h := startHost(t, []*config.Server{binServer("12306-mcp", trainBin, map[string]string{"TRAIN12306_TODAY": "2026-11-25"})}, nil)
		var tr transcript
		a := &agent.Agent{Model: p.model, Tools: h, Policy: &agent.Policy{Mode: agent.Auto}, OnEvent: tr.event}
		res, err := a.Run(context.Background(), agent.Text("明天从北京到上海有哪些火车？"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s transcript:\n%s", p.name, tr.b.String())
		var names []string
		for _, c := range res.Calls {
			names = append(names, c.Tool)
		}
		if strings.Join(names, " ") != "get-current-date get-station-code-of-citys get-tickets" || res.Steps != 4 {
			t.Errorf("calls %v in %d steps", names, res.Steps)
		}
		if string(res.Calls[2].Arguments) != `{"date":"2026-11-26","fromStation":"BJP","toStation":"SHH"}` {
			t.Errorf("get-tickets arguments %s", res.Calls[2].Arguments)
		}
		for _, want := range []string{"2026-11-26从北京到上海的火车有：", "1. G1 北京南 07:00 开，上海虹桥 11:29 到，历时 04:29", "D705 北京 19:36 开，上海 07:39 到", "共 5 趟。"} {
			if !strings.Contains(res.Answer, want) {
				t.Errorf("the answer lacks %q:\n%s", want, res.Answer)
			}
		}
		if res.Usage.OutputTokens == 0 || res.Usage.InputTokens == 0 {
			t.Errorf("usage %+v", res.Usage)
		}
	})
}

// The stop reasons come through each API's encoder in MCP's words.
func TestStopReasonsOnTheWire(t *testing.T) {
	cases := []struct {
		reply fakemodel.Reply
		want  agent.StopReason
	}{
		{fakemodel.Reply{Text: "done"}, agent.EndTurn},
		{fakemodel.Reply{Text: "cut sh", Done: "length"}, agent.MaxTokens},
		{fakemodel.Reply{Calls: []fakemodel.Call{{Name: "t", Args: map[string]any{"a": 1}}}}, agent.ToolUse},
	}
	for _, tc := range cases {
		_, base := startModel(t, func(*api.ChatRequest) fakemodel.Reply { return tc.reply })
		for _, p := range providers(t, base) {
			r, err := p.model.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))},
				Tools: []agent.ToolSpec{{Name: "t", Schema: []byte(`{"type":"object"}`)}}}, nil)
			if err != nil || r.Stop != tc.want {
				t.Errorf("%s, %+v: %v %v", p.name, tc.reply, r, err)
			}
		}
	}
}

// A call whose arguments were not JSON is echoed back as {}: Ollama's
// translation, like other compatible servers, rejects a request whose
// past tool call arguments do not parse ("invalid tool call arguments").
func TestInvalidArgumentsDoNotBreakTheNextRequest(t *testing.T) {
	fake, base := startModel(t, fakemodel.Directives)
	for _, p := range providers(t, base) {
		req := &agent.Request{Messages: []agent.Message{
			agent.UserMessage(agent.Text("go")),
			{Role: agent.Assistant, Parts: []agent.Part{{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "call_9", Name: "t", Arguments: `{"a": tru`}}}},
			{Role: agent.Tool, Parts: []agent.Part{{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "call_9", Name: "t", IsError: true,
				Content: []agent.Part{agent.Text("Error: the arguments of this call are not a JSON object")}}}}},
		}, Tools: []agent.ToolSpec{{Name: "t", Schema: []byte(`{"type":"object"}`)}}}
		r, err := p.model.Generate(context.Background(), req, nil)
		if err != nil || !strings.Contains(r.Message.Text(), "t returned: Error: the arguments") {
			t.Errorf("%s: %v %+v", p.name, err, r)
		}
	}
	if n := len(fake.Exchanges()); n != 2 {
		t.Errorf("%d requests reached the model", n)
	}
}
