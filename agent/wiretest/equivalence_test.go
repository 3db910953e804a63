package wiretest

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/anthropic"
	"github.com/ferrymcp/ferry/agent/openai"
	"github.com/ferrymcp/ferry/agent/wiretest/fakemodel"
	"github.com/ferrymcp/ferry/agent/wiretest/sdkanthropic"
	"github.com/ferrymcp/ferry/agent/wiretest/sdkopenai"
	"github.com/ollama/ollama/api"
)

// These tests hold ferry's own clients (agent/openai, agent/anthropic) to
// the official SDKs (sdkopenai, sdkanthropic: the same translations on
// openai-go and anthropic-sdk-go): the same request sent by both must
// reach the server as the same JSON, and the same stream read by both
// must make the same reply.

// recorded is a request as the server got it.
type recorded struct {
	method, path string
	header       http.Header
	body         any
}

// recorder is a TLS server on 127.0.0.1 that records the requests and
// answers each with answer. Its client dials it whatever the host, so
// that the providers' own addresses (api.openai.com, where OpenAI's
// rules apply) can be used.
type recorder struct {
	mu     sync.Mutex
	reqs   []recorded
	answer func(w http.ResponseWriter)
	client *http.Client
}

func newRecorder(t *testing.T, answer func(w http.ResponseWriter)) *recorder {
	t.Helper()
	rec := &recorder{answer: answer}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("%s: the body is not JSON: %v", r.URL.Path, err)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), body})
		rec.mu.Unlock()
		rec.answer(w)
	}))
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	rec.client = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	return rec
}

func (rec *recorder) requests() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// pair is one provider's client and its SDK reference, with the same
// options.
type pair struct {
	name       string
	ours, sdk  agent.Model
	authHeader string
}

func openaiPair(t *testing.T, rec *recorder, base string) pair {
	t.Helper()
	o, err := openai.New(openai.Options{Model: "gpt-test", APIKey: "sk-test", BaseURL: base, HTTPClient: rec.client, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sdkopenai.New(sdkopenai.Options{Model: "gpt-test", APIKey: "sk-test", BaseURL: base, HTTPClient: rec.client, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return pair{"openai at " + base, o, s, "Authorization"}
}

func anthropicPair(t *testing.T, rec *recorder, base string) pair {
	t.Helper()
	o, err := anthropic.New(anthropic.Options{Model: "claude-test", APIKey: "sk-ant-test", BaseURL: base, HTTPClient: rec.client, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sdkanthropic.New(sdkanthropic.Options{Model: "claude-test", APIKey: "sk-ant-test", BaseURL: base, HTTPClient: rec.client, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return pair{"anthropic at " + base, o, s, "X-Api-Key"}
}

// sseAnswer serves the events ("event: name" when a name is given),
// then "data: [DONE]" when done.
func sseAnswer(done bool, events ...[2]string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			if e[0] != "" {
				fmt.Fprintf(w, "event: %s\n", e[0])
			}
			fmt.Fprintf(w, "data: %s\n\n", e[1])
		}
		if done {
			io.WriteString(w, "data: [DONE]\n\n")
		}
	}
}

const chunkHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-test",`

var okOpenAI = sseAnswer(true,
	[2]string{"", chunkHead + `"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`})

var okAnthropic = sseAnswer(false,
	[2]string{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`},
	[2]string{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
	[2]string{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`},
	[2]string{"content_block_stop", `{"type":"content_block_stop","index":0}`},
	[2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":2}}`},
	[2]string{"message_stop", `{"type":"message_stop"}`})

func temperature(v float64) *float64 { return &v }

// conversations are the requests both clients send: every kind of part
// and message, the options, and what must be repaired on the way (ids
// another provider made, arguments that are not JSON, schemas that are
// not objects).
func conversations() map[string]*agent.Request {
	img := agent.Image([]byte("\x89PNG\r\n"), "image/png")
	user := agent.UserMessage(agent.Text("What is in /tmp? <b>&</b> 你好"))
	calls := agent.Message{Role: agent.Assistant, Parts: []agent.Part{
		agent.Text("Let me look."),
		{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "call:1", Name: "fs__list", Arguments: `{"path":"/tmp","deep":false}`}},
		{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "toolu_2", Name: "fs__read", Arguments: `{"path": tru`}},
	}}
	results := agent.Message{Role: agent.Tool, Parts: []agent.Part{
		{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "call:1", Name: "fs__list", Content: []agent.Part{agent.Text("a.txt\nb.png"), img}}},
		{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "toolu_2", Name: "fs__read", IsError: true,
			Content: []agent.Part{agent.Text("the arguments are not a JSON object")}}},
	}}
	tools := []agent.ToolSpec{
		{Name: "fs__list", Description: "Lists a folder.", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"},"deep":{"type":"boolean"}},"required":["path"],"additionalProperties":false,"$schema":"https://json-schema.org/draft/2020-12/schema"}`)},
		{Name: "fs__read", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "no_schema", Description: "A tool whose schema is not an object.", Schema: []byte(`true`)},
		{Name: "null_properties", Schema: []byte(`{"type":"object","properties":null,"required":null}`)},
	}
	return map[string]*agent.Request{
		"one line":   {Messages: []agent.Message{agent.UserMessage(agent.Text("hello"))}},
		"empty text": {Messages: []agent.Message{agent.UserMessage(agent.Text(""))}},
		"a system prompt and options": {System: "Be brief.", Messages: []agent.Message{user},
			MaxTokens: 100, Temperature: temperature(0), StopSequences: []string{"\n\n", "END"}},
		"a sampling request": {System: "You are a helpful test server.", Messages: []agent.Message{agent.UserMessage(agent.Text("a haiku"))},
			MaxTokens: 40, Temperature: temperature(0.7)},
		"tools, calls and results": {System: "sys", Tools: tools, Messages: []agent.Message{user, calls, results}},
		"the user speaks after the results": {Tools: tools, ToolChoice: "auto",
			Messages: []agent.Message{user, calls, results, agent.UserMessage(agent.Text("and?"))}},
		"tools required":         {Tools: tools[:1], ToolChoice: "required", Messages: []agent.Message{user}},
		"tools none":             {Tools: tools[:1], ToolChoice: "none", Messages: []agent.Message{user}},
		"a choice without tools": {ToolChoice: "required", Messages: []agent.Message{user}},
		"images from the user":   {Messages: []agent.Message{agent.UserMessage(agent.Text("look"), img, agent.Text("and this"), img)}},
		"only calls": {Messages: []agent.Message{user,
			{Role: agent.Assistant, Parts: []agent.Part{{Type: agent.ToolCallPart, Call: &agent.ToolCall{ID: "c", Name: "t", Arguments: ""}}}},
			{Role: agent.Tool, Parts: []agent.Part{{Type: agent.ToolResultPart, Result: &agent.ToolResult{CallID: "c", Name: "t"}}}}}},
		"an assistant that said nothing": {Messages: []agent.Message{user, {Role: agent.Assistant}, agent.UserMessage(agent.Text("well?"))}},
	}
}

// The same request reaches the server as the same JSON, at the same
// path, with the same credentials, from ferry's client and from the SDK.
func TestRequestsAsTheSDKSendsThem(t *testing.T) {
	cases := []struct {
		base   string
		answer func(w http.ResponseWriter)
		open   func(*testing.T, *recorder, string) pair
	}{
		{"https://api.openai.com/v1", okOpenAI, openaiPair}, // OpenAI's own rules: max_completion_tokens
		{"https://llm.example/compatible-mode/v1/", okOpenAI, openaiPair},
		{"https://api.anthropic.com", okAnthropic, anthropicPair},
		{"https://gateway.example/anthropic/", okAnthropic, anthropicPair},
	}
	for _, tc := range cases {
		for name, req := range conversations() {
			t.Run(tc.base+"/"+name, func(t *testing.T) {
				rec := newRecorder(t, tc.answer)
				p := tc.open(t, rec, tc.base)
				ours, oursErr := p.ours.Generate(context.Background(), req, nil)
				sdk, sdkErr := p.sdk.Generate(context.Background(), req, nil)
				if oursErr != nil || sdkErr != nil {
					t.Fatalf("ours: %v; the SDK's: %v", oursErr, sdkErr)
				}
				if !reflect.DeepEqual(ours, sdk) {
					t.Errorf("replies differ:\nours %+v\nsdk  %+v", ours, sdk)
				}
				reqs := rec.requests()
				if len(reqs) != 2 {
					t.Fatalf("%d requests", len(reqs))
				}
				sameRequest(t, p.authHeader, reqs[0], reqs[1])
			})
		}
	}
}

func sameRequest(t *testing.T, auth string, ours, sdk recorded) {
	t.Helper()
	if ours.method != sdk.method || ours.path != sdk.path {
		t.Errorf("ours %s %s, the SDK's %s %s", ours.method, ours.path, sdk.method, sdk.path)
	}
	for _, h := range []string{auth, "Anthropic-Version", "Content-Type", "OpenAI-Organization", "OpenAI-Project"} {
		if ours.header.Get(h) != sdk.header.Get(h) {
			t.Errorf("%s: ours %q, the SDK's %q", h, ours.header.Get(h), sdk.header.Get(h))
		}
	}
	if !reflect.DeepEqual(ours.body, sdk.body) {
		o, _ := json.MarshalIndent(ours.body, "", " ")
		s, _ := json.MarshalIndent(sdk.body, "", " ")
		t.Errorf("bodies differ:\nours %s\nsdk  %s", o, s)
	}
}

// The same stream makes the same reply, and the same text streamed.
func TestRepliesAsTheSDKReadsThem(t *testing.T) {
	type streamCase struct {
		name   string
		answer func(w http.ResponseWriter)
	}
	chunk := func(s string) [2]string { return [2]string{"", chunkHead + s} }
	openaiCases := []streamCase{
		{"text in pieces", sseAnswer(true,
			chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"content":"lo, 世界"},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`),
			chunk(`"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`))},
		{"parallel calls in fragments", sseAnswer(true,
			chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"mem__read","arguments":""}}]},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"mem__write","arguments":"{\"x\":"}}]},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"/a\"}"}}]},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
			chunk(`"choices":[],"usage":{"prompt_tokens":31,"completion_tokens":12,"total_tokens":43}}`))},
		{"text and a call", sseAnswer(true,
			chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":"Checking."},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"t","arguments":"{\"a\": tru"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`))},
		{"a refusal", sseAnswer(true,
			chunk(`"choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't help"},"finish_reason":null}]}`),
			chunk(`"choices":[{"index":0,"delta":{"refusal":" with that."},"finish_reason":"stop"}]}`))},
		{"cut at the length", sseAnswer(true, chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":"cut sh"},"finish_reason":"length"}]}`))},
		{"filtered", sseAnswer(true, chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"content_filter"}]}`))},
		{"an unknown reason", sseAnswer(true, chunk(`"choices":[{"index":0,"delta":{"role":"assistant","content":"x"},"finish_reason":"eos"}]}`))},
		{"comments and a retry field", sseAnswer(true,
			[2]string{"", chunkHead + `"choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":null}]}` + "\n: keep-alive\nretry: 100"},
			chunk(`"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`))},
	}
	start := [2]string{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_read_input_tokens":10,"cache_creation_input_tokens":5,"output_tokens":1}}}`}
	ping := [2]string{"ping", `{"type": "ping"}`}
	stop := [2]string{"message_stop", `{"type":"message_stop"}`}
	delta := func(reason string) [2]string {
		return [2]string{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":40}}`}
	}
	block := func(i int, kind, body string) [2]string {
		return [2]string{"content_block_" + kind, fmt.Sprintf(`{"type":"content_block_%s","index":%d%s}`, kind, i, body)}
	}
	text := func(i int, s string) [2]string {
		return block(i, "delta", fmt.Sprintf(`,"delta":{"type":"text_delta","text":%q}`, s))
	}
	input := func(i int, s string) [2]string {
		return block(i, "delta", fmt.Sprintf(`,"delta":{"type":"input_json_delta","partial_json":%q}`, s))
	}
	anthropicCases := []streamCase{
		{"text and parallel tool use", sseAnswer(false, start, ping,
			block(0, "start", `,"content_block":{"type":"text","text":""}`), text(0, "Let me "), text(0, "check."), block(0, "stop", ""),
			block(1, "start", `,"content_block":{"type":"tool_use","id":"toolu_a","name":"mem__read","input":{}}`),
			input(1, `{"pa`), input(1, `th": "/a"`), input(1, `}`), block(1, "stop", ""), ping,
			block(2, "start", `,"content_block":{"type":"tool_use","id":"toolu_b","name":"mem__list","input":{}}`), block(2, "stop", ""),
			delta("tool_use"), stop)},
		{"thinking, then text", sseAnswer(false, start,
			block(0, "start", `,"content_block":{"type":"thinking","thinking":"","signature":""}`),
			block(0, "delta", `,"delta":{"type":"thinking_delta","thinking":"Hmm."}`),
			block(0, "delta", `,"delta":{"type":"signature_delta","signature":"c2ln"}`), block(0, "stop", ""),
			block(1, "start", `,"content_block":{"type":"text","text":""}`), text(1, "Done."), block(1, "stop", ""),
			delta("end_turn"), stop)},
		{"stop sequence", sseAnswer(false, start, block(0, "start", `,"content_block":{"type":"text","text":""}`), text(0, "a"), block(0, "stop", ""), delta("stop_sequence"), stop)},
		{"max tokens", sseAnswer(false, start, block(0, "start", `,"content_block":{"type":"text","text":""}`), text(0, "a"), block(0, "stop", ""), delta("max_tokens"), stop)},
		{"refusal", sseAnswer(false, start, delta("refusal"), stop)},
		{"pause turn", sseAnswer(false, start, block(0, "start", `,"content_block":{"type":"text","text":""}`), text(0, "b"), block(0, "stop", ""), delta("pause_turn"), stop)},
		{"an unknown reason", sseAnswer(false, start, block(0, "start", `,"content_block":{"type":"text","text":""}`), text(0, "c"), block(0, "stop", ""), delta("later_reason"), stop)},
	}
	cases := []struct {
		base   string
		open   func(*testing.T, *recorder, string) pair
		events []streamCase
	}{
		{"https://llm.example/v1", openaiPair, openaiCases},
		{"https://api.anthropic.com", anthropicPair, anthropicCases},
	}
	req := &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}
	for _, tc := range cases {
		for _, sc := range tc.events {
			t.Run(tc.base+"/"+sc.name, func(t *testing.T) {
				p := tc.open(t, newRecorder(t, sc.answer), tc.base)
				var oursText, sdkText strings.Builder
				ours, oursErr := p.ours.Generate(context.Background(), req, func(d agent.Delta) { oursText.WriteString(d.Text) })
				sdk, sdkErr := p.sdk.Generate(context.Background(), req, func(d agent.Delta) { sdkText.WriteString(d.Text) })
				if oursErr != nil || sdkErr != nil {
					t.Fatalf("ours: %v; the SDK's: %v", oursErr, sdkErr)
				}
				if !reflect.DeepEqual(ours, sdk) || oursText.String() != sdkText.String() {
					t.Errorf("replies differ:\nours %+v, streamed %q\nsdk  %+v, streamed %q", ours, oursText.String(), sdk, sdkText.String())
				}
			})
		}
	}
}

// The same failure is the same kind of *agent.ModelError, with the same
// status, and says what the provider said; neither says the key.
func TestErrorsAsTheSDKClassifiesThem(t *testing.T) {
	status := func(code int, body string) func(w http.ResponseWriter) {
		return func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(code)
			io.WriteString(w, body)
		}
	}
	cases := []struct {
		name   string
		open   func(*testing.T, *recorder, string) pair
		base   string
		answer func(w http.ResponseWriter)
		says   string
		// inStream: an error event in a stream that began with 200 OK,
		// which the SDK reports as an error of HTTP status 200, and
		// ferry's client as an error without a status.
		inStream bool
	}{
		{"openai 401", openaiPair, "https://api.openai.com/v1", status(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`), "Incorrect API key provided", false},
		{"openai 429", openaiPair, "https://api.openai.com/v1", status(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), "Rate limit reached", false},
		{"openai 500", openaiPair, "https://llm.example/v1", status(500, `{"error":{"message":"The server had an error","type":"server_error"}}`), "The server had an error", false},
		{"openai 403", openaiPair, "https://llm.example/v1", status(403, `{"error":{"message":"Country not supported"}}`), "Country not supported", false},
		{"anthropic 401", anthropicPair, "https://api.anthropic.com", status(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), "authentication_error: invalid x-api-key", false},
		{"anthropic 529", anthropicPair, "https://api.anthropic.com", status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), "overloaded_error: Overloaded", false},
		{"anthropic 400", anthropicPair, "https://api.anthropic.com", status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`), "invalid_request_error: max_tokens: must be positive", false},
		{"anthropic error event", anthropicPair, "https://api.anthropic.com", sseAnswer(false,
			[2]string{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`},
			[2]string{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}), "overloaded_error: Overloaded", true},
	}
	req := &agent.Request{Messages: []agent.Message{agent.UserMessage(agent.Text("go"))}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.open(t, newRecorder(t, tc.answer), tc.base)
			_, oursErr := p.ours.Generate(context.Background(), req, nil)
			_, sdkErr := p.sdk.Generate(context.Background(), req, nil)
			var ours, sdk *agent.ModelError
			if !errors.As(oursErr, &ours) || !errors.As(sdkErr, &sdk) {
				t.Fatalf("ours: %v; the SDK's: %v", oursErr, sdkErr)
			}
			wantStatus := sdk.Status
			if tc.inStream {
				wantStatus = 0
			}
			if ours.Kind != sdk.Kind || ours.Status != wantStatus || ours.Provider != sdk.Provider {
				t.Errorf("ours %+v, the SDK's %+v", ours, sdk)
			}
			for _, err := range []error{oursErr, sdkErr} {
				if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "-test") {
					t.Errorf("%v: want %q, and no key", err, tc.says)
				}
			}
		})
	}
}

// Through Ollama's translation middleware, the real encoder of a server:
// the same request makes the same Ollama request from both clients, and
// the middleware's stream the same reply.
func TestOllamaSeesBothAlike(t *testing.T) {
	replies := map[string]fakemodel.Reply{
		"text":           {Text: "The ferry leaves at nine."},
		"cut at length":  {Text: "cut sh", Done: "length"},
		"parallel calls": {Calls: []fakemodel.Call{{Name: "t", Args: map[string]any{"a": 1}}, {Name: "u", Args: map[string]any{"b": "x"}}}},
		"text and calls": {Text: "Checking.", Calls: []fakemodel.Call{{Name: "t", Args: map[string]any{}}}},
	}
	conv := conversations()["tools, calls and results"]
	for name, reply := range replies {
		t.Run(name, func(t *testing.T) {
			fake, base := startModel(t, func(*api.ChatRequest) fakemodel.Reply { return reply })
			models := map[string][2]agent.Model{}
			o, _ := openai.New(openai.Options{Model: "fake", APIKey: "sk-test", BaseURL: base + "/v1", MaxRetries: -1})
			so, _ := sdkopenai.New(sdkopenai.Options{Model: "fake", APIKey: "sk-test", BaseURL: base + "/v1", MaxRetries: -1})
			a, _ := anthropic.New(anthropic.Options{Model: "fake", APIKey: "sk-ant-test", BaseURL: base, MaxRetries: -1})
			sa, _ := sdkanthropic.New(sdkanthropic.Options{Model: "fake", APIKey: "sk-ant-test", BaseURL: base, MaxRetries: -1})
			models["openai"], models["anthropic"] = [2]agent.Model{o, so}, [2]agent.Model{a, sa}
			for provider, m := range models {
				var replies [2]*agent.Reply
				for i, model := range m {
					r, err := model.Generate(context.Background(), conv, nil)
					if err != nil {
						t.Fatalf("%s %d: %v", provider, i, err)
					}
					replies[i] = r
				}
				// The fake numbers the calls it makes as it goes.
				if ours, sdk := callsRenumbered(replies[0]), callsRenumbered(replies[1]); !reflect.DeepEqual(ours, sdk) {
					t.Errorf("%s replies differ:\nours %+v\nsdk  %+v", provider, ours, sdk)
				}
			}
			ex := fake.Exchanges()
			if len(ex) != 4 {
				t.Fatalf("%d exchanges", len(ex))
			}
			for _, pair := range [][2]fakemodel.Exchange{{ex[0], ex[1]}, {ex[2], ex[3]}} {
				if !reflect.DeepEqual(raw(t, pair[0]), raw(t, pair[1])) || !reflect.DeepEqual(asJSON(t, pair[0].Chat), asJSON(t, pair[1].Chat)) {
					t.Errorf("%s: the requests differ:\nours %s\nsdk  %s", pair[0].Path, pair[0].Raw, pair[1].Raw)
				}
			}
		})
	}
}

// callsRenumbered is r with its calls' ids replaced by their place.
func callsRenumbered(r *agent.Reply) *agent.Reply {
	cp := *r
	cp.Message.Parts = nil
	for i, p := range r.Message.Parts {
		if p.Call != nil {
			c := *p.Call
			c.ID = fmt.Sprint("call ", i, " had an id: ", c.ID != "")
			p.Call = &c
		}
		cp.Message.Parts = append(cp.Message.Parts, p)
	}
	return &cp
}

// asJSON is v as generic JSON: Ollama's schemas keep their members in
// order, which the same JSON may not share.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}
