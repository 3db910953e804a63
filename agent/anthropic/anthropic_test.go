package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
)

// These fixtures are what Ollama's translation (the wire test module's
// harness) never sends, written from the Messages streaming reference:
// "event: NAME" and "data: {...}" per event; message_start,
// content_block_start / content_block_delta (text_delta, input_json_delta
// whose partial_json is valid only once joined) / content_block_stop per
// block, message_delta with stop_reason and the output tokens,
// message_stop; ping events anywhere; an error event that ends the
// stream.

type fixture struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	answers []func(w http.ResponseWriter)
}

func (f *fixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/messages" || r.Method != http.MethodPost {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	f.answers[min(n, len(f.answers)-1)](w)
}

type event struct{ name, data string }

func sse(events ...event) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.name, e.data)
			w.(http.Flusher).Flush()
		}
	}
}

func serve(t *testing.T, answers ...func(w http.ResponseWriter)) (*Model, *fixture) {
	t.Helper()
	f := &fixture{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m, err := New(Options{Model: "claude-test", APIKey: "sk-ant-fixture", BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

var start = event{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`}
var ping = event{"ping", `{"type": "ping"}`}
var stop = event{"message_stop", `{"type":"message_stop"}`}

func delta(reason string, out int) event {
	return event{"message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, reason, out)}
}

func textBlock(i int, chunks ...string) []event {
	ev := []event{{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)}}
	for _, c := range chunks {
		b, _ := json.Marshal(c)
		ev = append(ev, event{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, b)})
	}
	return append(ev, event{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
}

func toolBlock(i int, id, name string, fragments ...string) []event {
	ev := []event{{"content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name)}}
	for _, f := range fragments {
		b, _ := json.Marshal(f)
		ev = append(ev, event{"content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, i, b)})
	}
	return append(ev, event{"content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)})
}

func stream(parts ...any) []event {
	var out []event
	for _, p := range parts {
		switch v := p.(type) {
		case event:
			out = append(out, v)
		case []event:
			out = append(out, v...)
		}
	}
	return out
}

func TestStreamedTextAndParallelToolUse(t *testing.T) {
	m, f := serve(t, sse(stream(start, ping,
		textBlock(0, "Let me ", "check."),
		toolBlock(1, "toolu_a", "mem__read", `{"pa`, `th": "/a"`, `}`),
		ping,
		toolBlock(2, "toolu_b", "mem__list"),
		delta("tool_use", 40), stop)...))
	var text strings.Builder
	r, err := m.Generate(context.Background(), &agent.Request{System: "be brief", Messages: []agent.Message{agent.UserMessage(agent.Text("go"))},
		Tools: []agent.ToolSpec{{Name: "mem__read", Description: "Reads", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}}},
		func(d agent.Delta) { text.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	calls := r.Message.ToolCalls()
	if len(calls) != 2 || *calls[0] != (agent.ToolCall{ID: "toolu_a", Name: "mem__read", Arguments: `{"path": "/a"}`}) ||
		*calls[1] != (agent.ToolCall{ID: "toolu_b", Name: "mem__list", Arguments: `{}`}) {
		t.Errorf("calls %+v %+v", calls[0], calls[1])
	}
	if r.Message.Text() != "Let me check." || text.String() != "Let me check." || r.Stop != agent.ToolUse ||
		r.Usage != (agent.Usage{InputTokens: 25, OutputTokens: 40}) || r.Model != "claude-test" {
		t.Errorf("reply %+v, streamed %q", r, text.String())
	}
	body, hdr := f.bodies[0], f.headers[0]
	if hdr.Get("X-Api-Key") != "sk-ant-fixture" || hdr.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers %v", hdr)
	}
	tool := body["tools"].([]any)[0].(map[string]any)
	schema := tool["input_schema"].(map[string]any)
	if body["stream"] != true || body["max_tokens"] != float64(DefaultMaxTokens) || tool["name"] != "mem__read" ||
		schema["type"] != "object" || schema["required"].([]any)[0] != "path" || schema["additionalProperties"] != false ||
		body["system"].([]any)[0].(map[string]any)["text"] != "be brief" {
		t.Errorf("request %v", body)
	}
}

// Parallel results go back in one user message, tool_result blocks
// first, errors marked is_error, images inside the result.
func TestToolResultsInOneUserMessage(t *testing.T) {
	m, f := serve(t, sse(stream(start, textBlock(0, "ok"), delta("end_turn", 2), stop)...))
	img := agent.Image([]byte("PNG"), "image/png")
	req := &agent.Request{Messages: []agent.Message{
		agent.UserMessage(agent.Text("go")),
		{Role: agent.Assistant, Parts: []agent.Part{
			{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "call:1", Name: "a", Arguments: `{"x":1}`}},
			{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "call:2", Name: "b", Arguments: `{bad`}}}},
		{Role: agent.Tool, Parts: []agent.Part{
			{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "call:1", Content: []agent.Part{agent.Text("one"), img}}},
			{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "call:2", IsError: true, Content: []agent.Part{agent.Text("Error: bad arguments")}}}}},
		// A turn that stopped after the results: the user's next words
		// join them.
		agent.UserMessage(agent.Text("and?")),
	}}
	if _, err := m.Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	msgs := f.bodies[0]["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages %v", msgs)
	}
	uses := msgs[1].(map[string]any)["content"].([]any)
	if uses[0].(map[string]any)["id"] != "call_1" || uses[0].(map[string]any)["input"].(map[string]any)["x"] != float64(1) ||
		len(uses[1].(map[string]any)["input"].(map[string]any)) != 0 {
		t.Errorf("tool uses %v", uses)
	}
	content := msgs[2].(map[string]any)["content"].([]any)
	r1, r2, text := content[0].(map[string]any), content[1].(map[string]any), content[2].(map[string]any)
	if r1["type"] != "tool_result" || r1["tool_use_id"] != "call_1" || r1["is_error"] != nil ||
		r1["content"].([]any)[1].(map[string]any)["source"].(map[string]any)["data"] != "UE5H" {
		t.Errorf("first result %v", r1)
	}
	if r2["type"] != "tool_result" || r2["tool_use_id"] != "call_2" || r2["is_error"] != true {
		t.Errorf("second result %v", r2)
	}
	if text["type"] != "text" || text["text"] != "and?" {
		t.Errorf("after the results %v", text)
	}
}

func TestStopReasons(t *testing.T) {
	for reason, want := range map[string]agent.StopReason{
		"end_turn": agent.EndTurn, "tool_use": agent.ToolUse, "max_tokens": agent.MaxTokens,
		"stop_sequence": agent.StopSequence, "refusal": agent.Refusal,
	} {
		m, _ := serve(t, sse(stream(start, textBlock(0, "x"), delta(reason, 1), stop)...))
		r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
		if err != nil || r.Stop != want {
			t.Errorf("%s: %+v %v", reason, r, err)
		}
	}
}

func TestErrors(t *testing.T) {
	// An error event in the middle of the stream.
	m, _ := serve(t, sse(start, ping, event{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}))
	_, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	if k, ok := agent.ModelErrorKind(err); !ok || k != agent.ModelFailed || !strings.Contains(err.Error(), "Overloaded") {
		t.Errorf("error event: %v", err)
	}
	m, _ = serve(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	_, err = m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	var me *agent.ModelError
	if !errors.As(err, &me) || me.Kind != agent.ModelAuth || me.Status != 401 || !strings.Contains(err.Error(), "authentication_error: invalid x-api-key") {
		t.Errorf("401: %v", err)
	}
	if strings.Contains(err.Error(), "sk-ant-fixture") {
		t.Errorf("the key is in the error: %v", err)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_BASE_URL", "")
	if _, err := New(Options{Model: "claude"}); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

// Streams that do not make a message are errors of the model, never a
// reply with what came before.
func TestMalformedStreams(t *testing.T) {
	cases := []struct {
		name   string
		events []event
		want   string
	}{
		{"a delta of a block never started", stream(start, event{"content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`}), "content block 3 of 0"},
		{"a block out of order", stream(start, event{"content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`}), "started content block 1 after 0"},
		{"not JSON", stream(start, event{"content_block_start", `{"type":`}), "not JSON"},
		{"cut short", stream(start, textBlock(0, "Let me")), "ended before the message did"},
		{"no message", stream(ping), "ended without a message"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := serve(t, sse(tc.events...))
			r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
			if k, ok := agent.ModelErrorKind(err); !ok || k != agent.ModelFailed || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("reply %+v, error %v; want %q", r, err, tc.want)
			}
		})
	}
}

// The usage of message_delta is the message's total: it replaces that of
// message_start, count by count; cached input counts as input.
func TestUsage(t *testing.T) {
	m, _ := serve(t, sse(stream(
		event{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":5,"cache_read_input_tokens":100,"cache_creation_input_tokens":7,"output_tokens":1}}}`},
		textBlock(0, "hi"),
		event{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"input_tokens":6,"output_tokens":9}}`},
		stop)...))
	r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	if err != nil || r.Usage != (agent.Usage{InputTokens: 6 + 100 + 7, OutputTokens: 9}) {
		t.Errorf("usage %+v, %v", r, err)
	}
}

// A base URL that is not an http or https URL is refused at once, in
// words the user can act on.
func TestBaseURL(t *testing.T) {
	for _, base := range []string{"127.0.0.1:8080", "localhost:8080", "unix:///tmp/s"} {
		if _, err := New(Options{Model: "m", APIKey: "k", BaseURL: base}); err == nil || !strings.Contains(err.Error(), "http or https URL") {
			t.Errorf("%s: %v", base, err)
		}
	}
	t.Setenv("ANTHROPIC_BASE_URL", "")
	for base, want := range map[string]string{"": "https://api.anthropic.com/v1/messages", "http://127.0.0.1:8080/": "http://127.0.0.1:8080/v1/messages"} {
		m, err := New(Options{Model: "m", APIKey: "k", BaseURL: base})
		if err != nil || m.api.URL != want {
			t.Errorf("%q: %v", base, err)
		}
	}
}
