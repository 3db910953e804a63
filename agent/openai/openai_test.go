package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
)

// These fixtures are what Ollama's translation (the wire test module's
// harness) never sends: arguments streamed in fragments, parallel calls
// interleaved by index, a usage-only last chunk, invalid arguments, the
// other finish reasons, errors. They follow the Chat Completions
// streaming reference: "data: {chunk}" events, choices[].delta with
// tool_calls[{index, id?, type?, function:{name?, arguments}}], a last
// chunk with empty choices and usage when stream_options.include_usage is
// set, then "data: [DONE]".

// fixture serves one canned answer per request and records the bodies.
type fixture struct {
	mu      sync.Mutex
	bodies  []map[string]any
	answers []func(w http.ResponseWriter)
}

func (f *fixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	json.Unmarshal(raw, &body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.mu.Unlock()
	if got := r.Header.Get("Authorization"); got != "Bearer sk-fixture" {
		http.Error(w, "bad auth "+got, http.StatusTeapot)
		return
	}
	f.answers[min(n, len(f.answers)-1)](w)
}

func sse(events ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}
}

func serve(t *testing.T, answers ...func(w http.ResponseWriter)) (*Model, *fixture) {
	t.Helper()
	f := &fixture{answers: answers}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	m, err := New(Options{Model: "gpt-test", APIKey: "sk-fixture", BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m, f
}

const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test",`

func TestStreamedParallelCallsInFragments(t *testing.T) {
	m, f := serve(t, sse(
		head+`"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"mem__read","arguments":""}}]},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"mem__write","arguments":"{\"x\":"}}]},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"/a\"}"}}]},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":null}]}`,
		head+`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		head+`"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43}}`,
	))
	r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))},
		Tools: []agent.ToolSpec{{Name: "mem__read", Description: "Reads", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Message.ToolCalls()
	if len(got) != 2 || *got[0] != (agent.ToolCall{ID: "call_a", Name: "mem__read", Arguments: `{"path":"/a"}`}) ||
		*got[1] != (agent.ToolCall{ID: "call_b", Name: "mem__write", Arguments: `{"x":1}`}) {
		t.Errorf("calls %+v %+v", got[0], got[1])
	}
	if r.Stop != agent.ToolUse || r.Usage != (agent.Usage{InputTokens: 31, OutputTokens: 12}) || r.Model != "gpt-test" {
		t.Errorf("reply %+v", r)
	}
	body := f.bodies[0]
	tools := body["tools"].([]any)
	fn := tools[0].(map[string]any)["function"].(map[string]any)
	if body["stream"] != true || body["stream_options"].(map[string]any)["include_usage"] != true || tools[0].(map[string]any)["type"] != "function" ||
		fn["name"] != "mem__read" || fn["description"] != "Reads" || fn["parameters"].(map[string]any)["type"] != "object" || fn["strict"] != nil {
		t.Errorf("request %v", body)
	}
}

// The model's arguments that are not JSON reach the loop as written, and
// are echoed back as {} (compatible servers parse them) while the tool
// message tells the model what went wrong; each tool_call_id is answered
// by a tool message right after the assistant message.
func TestInvalidArgumentsEchoedAsEmptyObject(t *testing.T) {
	m, f := serve(t,
		sse(head+`"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"t","arguments":"{\"a\": tru"}}]},"finish_reason":null}]}`,
			head+`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		sse(head+`"choices":[{"index":0,"delta":{"role":"assistant","content":"Sorry."},"finish_reason":null}]}`,
			head+`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
	)
	req := &agent.Request{System: "sys", Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}
	r, err := m.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Message.ToolCalls(); len(c) != 1 || c[0].Arguments != `{"a": tru` {
		t.Fatalf("calls %+v", c)
	}
	req.Messages = append(req.Messages, r.Message, agent.Message{Role: agent.Tool, Parts: []agent.Part{{Type: agent.ToolResultPart,
		Result: &agent.ToolResult{CallID: "call_1", Name: "t", IsError: true, Content: []agent.Part{agent.Text("Error: the arguments are not a JSON object")}}}}})
	var text strings.Builder
	r, err = m.Generate(context.Background(), req, func(d agent.Delta) { text.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Message.Text() != "Sorry." || text.String() != "Sorry." || r.Stop != agent.EndTurn {
		t.Errorf("reply %+v streamed %q", r, text.String())
	}
	msgs := f.bodies[1]["messages"].([]any)
	want := []string{"system", "user", "assistant", "tool"}
	for i, w := range want {
		if msgs[i].(map[string]any)["role"] != w {
			t.Fatalf("messages %v", msgs)
		}
	}
	call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
	if call["id"] != "call_1" || call["function"].(map[string]any)["arguments"] != "{}" {
		t.Errorf("echoed call %v", call)
	}
	tool := msgs[3].(map[string]any)
	if tool["tool_call_id"] != "call_1" || tool["content"] != "Error: the arguments are not a JSON object" {
		t.Errorf("tool message %v", tool)
	}
}

func TestFinishReasons(t *testing.T) {
	for reason, want := range map[string]agent.StopReason{
		"stop": agent.EndTurn, "tool_calls": agent.ToolUse, "length": agent.MaxTokens, "content_filter": agent.Refusal, "function_call": agent.ToolUse,
	} {
		m, _ := serve(t, sse(head+`"choices":[{"index":0,"delta":{"role":"assistant","content":"x"},"finish_reason":"`+reason+`"}]}`))
		r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
		if err != nil || r.Stop != want {
			t.Errorf("%s: %v %v", reason, r, err)
		}
	}
}

// Images of a tool result (which tool messages cannot hold) follow in a
// user message; the user's own images go as data URLs.
func TestImages(t *testing.T) {
	m, f := serve(t, sse(head+`"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`))
	img := agent.Image([]byte("PNG"), "image/png")
	req := &agent.Request{Messages: []agent.Message{
		agent.UserMessage(agent.Text("look"), img),
		{Role: agent.Assistant, Parts: []agent.Part{{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "c", Name: "shot", Arguments: "{}"}}}},
		{Role: agent.Tool, Parts: []agent.Part{{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "c", Content: []agent.Part{agent.Text("a shot"), img}}}}},
	}}
	if _, err := m.Generate(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	msgs := f.bodies[0]["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("messages %v", msgs)
	}
	user := msgs[0].(map[string]any)["content"].([]any)
	if user[1].(map[string]any)["image_url"].(map[string]any)["url"] != "data:image/png;base64,UE5H" {
		t.Errorf("user content %v", user)
	}
	if tool := msgs[2].(map[string]any); tool["content"] != "a shot\n[an image (image/png), given in the next message]" {
		t.Errorf("tool %v", tool)
	}
	if after := msgs[3].(map[string]any); after["role"] != "user" || len(after["content"].([]any)) != 2 {
		t.Errorf("after %v", after)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	m, _ := serve(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)
	})
	_, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	var me *agent.ModelError
	if !errors.As(err, &me) || me.Kind != agent.ModelAuth || me.Status != 401 || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("401: %v", err)
	}
	if strings.Contains(err.Error(), "sk-fixture") {
		t.Errorf("the key is in the error: %v", err)
	}

	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	gone, _ := New(Options{Model: "m", APIKey: "k", BaseURL: "http://" + addr + "/v1", MaxRetries: -1})
	_, err = gone.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	if k, ok := agent.ModelErrorKind(err); !ok || k != agent.ModelUnreachable {
		t.Errorf("refused: %v", err)
	}

	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	if _, err := New(Options{Model: "gpt-4o"}); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
}

// Streams that do not make a reply are errors of the model, never a
// reply with what came before.
func TestMalformedStreams(t *testing.T) {
	text := head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"par"},"finish_reason":null}]}`
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   string
	}{
		{"another completion's chunk", sse(text, `{"id":"chatcmpl-2","choices":[{"index":0,"delta":{"content":"x"}}]}`), "does not continue the reply"},
		{"a call index out of bounds", sse(text, head+`"choices":[{"index":0,"delta":{"tool_calls":[{"index":100000,"id":"c","function":{"name":"t","arguments":"{}"}}]}}]}`), "does not continue the reply"},
		{"not JSON", sse(text, `{"id":`), "not a chunk"},
		{"an error in the stream", sse(text, `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`), "The server had an error"},
		{"cut short", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: "+text+"\n\n")
		}, "ended before the reply did"},
		{"no choice", sse(head + `"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0,"total_tokens":1}}`), "no choice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := serve(t, tc.answer)
			r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
			if k, ok := agent.ModelErrorKind(err); !ok || k != agent.ModelFailed || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("reply %+v, error %v; want %q", r, err, tc.want)
			}
		})
	}
}

// A stream that ends without "data: [DONE]" after its choice finished
// is a reply (some compatible servers leave [DONE] out); tool call
// fragments without an index (as some send them) are calls of their own
// ids.
func TestStreamWithoutDoneOrIndexes(t *testing.T) {
	m, _ := serve(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			head + `"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"t","arguments":"{\"n\":"}}]}}]}`,
			head + `"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"1}"}}]}}]}`,
			head + `"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"u","arguments":"{}"}}]}}]}`,
			head + `"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		} {
			io.WriteString(w, "data: "+c+"\n\n")
		}
	})
	r, err := m.Generate(context.Background(), &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Message.ToolCalls()
	if len(got) != 2 || *got[0] != (agent.ToolCall{ID: "a", Name: "t", Arguments: `{"n":1}`}) || *got[1] != (agent.ToolCall{ID: "b", Name: "u", Arguments: `{}`}) {
		t.Errorf("calls %v", got)
	}
}

// A base URL that is not an http or https URL is refused at once, in
// words the user can act on.
func TestBaseURL(t *testing.T) {
	for _, base := range []string{"127.0.0.1:11434/v1", "localhost:1234", "unix:///tmp/s"} {
		if _, err := New(Options{Model: "m", APIKey: "k", BaseURL: base}); err == nil || !strings.Contains(err.Error(), "http or https URL") {
			t.Errorf("%s: %v", base, err)
		}
	}
	for _, base := range []string{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1/"} {
		m, err := New(Options{Model: "m", APIKey: "k", BaseURL: base})
		if err != nil || m.api.URL != "http://127.0.0.1:11434/v1/chat/completions" {
			t.Errorf("%s: %v", base, err)
		}
	}
}
