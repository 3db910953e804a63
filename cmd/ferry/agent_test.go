package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// chatFixture is an OpenAI Chat Completions endpoint that streams canned
// answers, written from the API reference ("data: {chunk}" events, tool
// calls by index, finish_reason, a usage chunk, "data: [DONE]"). The
// agent's wire formats are tested against Ollama's translation in the
// agent/wiretest module; here the command around the agent is.
//
// Its script: a user message "call TOOL {json}" is answered by that tool
// call, tool results by "done: RESULT", anything else by "you said: ...".
type chatFixture struct {
	mu       sync.Mutex
	requests []map[string]any
	status   int // answer with this status instead
}

func (f *chatFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	f.requests = append(f.requests, req)
	status := f.status
	f.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"scripted failure","type":"invalid_request_error"}}`)
		return
	}
	msgs := req["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	content, _ := last["content"].(string)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta, finish string) {
		fin := "null"
		if finish != "" {
			fin = `"` + finish + `"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fixture\",\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":%s}]}\n\n", delta, fin)
	}
	switch {
	case last["role"] == "tool":
		b, _ := json.Marshal("done: " + content)
		chunk(`{"role":"assistant","content":`+string(b)+`}`, "")
		chunk(`{}`, "stop")
	case strings.HasPrefix(content, "call "):
		name, args, _ := strings.Cut(strings.TrimPrefix(content, "call "), " ")
		if args == "" {
			args = "{}"
		}
		b, _ := json.Marshal(args)
		chunk(fmt.Sprintf(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":%q,"arguments":%s}}]}`, len(msgs), name, b), "")
		chunk(`{}`, "tool_calls")
	default:
		b, _ := json.Marshal(fmt.Sprintf("you said: %s (%d messages)", content, len(msgs)))
		chunk(`{"role":"assistant","content":`+string(b)+`}`, "")
		chunk(`{}`, "stop")
	}
	io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fixture","choices":[],"usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}`+"\n\ndata: [DONE]\n\n")
}

func startFixture(t *testing.T) (*chatFixture, string) {
	t.Helper()
	f := &chatFixture{}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

// agentConfig writes a configuration with ferry's example server.
func agentConfig(t *testing.T, agentSettings string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	cfg := fmt.Sprintf(`{"mcpServers":{"ex":{"command":%q}}%s}`, exampleServer, agentSettings)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunJSON(t *testing.T) {
	_, base := startFixture(t)
	cfg := agentConfig(t, "")
	code, out, errOut := runFerry(t, "", "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base,
		"--approval", "auto", "--format", "json", "-p", `call ex__echo {"message":"hi"}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		Answer    string `json:"answer"`
		Model     string `json:"model"`
		ToolCalls []struct {
			Server, Tool, Name, Result string
			Arguments                  map[string]any
			MS                         *int64 `json:"ms"`
		} `json:"toolCalls"`
		Usage struct{ InputTokens, OutputTokens int64 } `json:"usage"`
		Steps int                                       `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	c := res.ToolCalls
	if res.Answer != "done: hi" || res.Model != "openai/fixture" || len(c) != 1 || c[0].Server != "ex" || c[0].Tool != "echo" ||
		c[0].Arguments["message"] != "hi" || c[0].Result != "hi" || c[0].MS == nil || res.Usage.InputTokens != 22 || res.Steps != 2 {
		t.Errorf("output:\n%s", out)
	}
}

func TestRunText(t *testing.T) {
	_, base := startFixture(t)
	t.Setenv("FERRY_MODEL", "openai/fixture")
	code, out, errOut := runFerry(t, "", "run", "--config", agentConfig(t, ""), "--base-url", base, "-p", "hello")
	if code != 0 || out != "you said: hello (1 messages)\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The prompt from stdin, the model and approval from the
	// configuration.
	code, out, _ = runFerry(t, "from stdin", "run", "--config", agentConfig(t, `,"agent":{"model":"openai/fixture","system":"be brief"}`), "--base-url", base, "-p", "-")
	if code != 0 || out != "you said: from stdin (2 messages)\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

// Without a terminal, ask refuses, says so to the model, and the run
// exits with exitNotApproved.
func TestRunAskWithoutTerminal(t *testing.T) {
	f, base := startFixture(t)
	code, out, errOut := runFerry(t, "", "run", "--config", agentConfig(t, ""), "--model", "openai/fixture", "--base-url", base,
		"--format", "json", "-p", `call ex__echo {"message":"hi"}`)
	if code != exitNotApproved || !strings.Contains(out, `"denied": true`) || !strings.Contains(out, "no terminal to ask") {
		t.Errorf("exit %d: %s %s", code, out, errOut)
	}
	msgs := f.requests[1]["messages"].([]any)
	if tool := msgs[len(msgs)-1].(map[string]any); !strings.Contains(tool["content"].(string), "need the user's approval and there is no terminal") {
		t.Errorf("the model was told %v", tool)
	}
	// The configuration's allow list lets it run.
	code, out, _ = runFerry(t, "", "run", "--config", agentConfig(t, `,"agent":{"allow":["ex__echo"]}`), "--model", "openai/fixture", "--base-url", base,
		"-p", `call ex__echo {"message":"hi"}`)
	if code != 0 || out != "done: hi\n" {
		t.Errorf("allowed: exit %d, %q", code, out)
	}
}

func TestRunExitCodes(t *testing.T) {
	f, base := startFixture(t)
	cfg := agentConfig(t, "")
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + l.Addr().String() + "/v1"
	l.Close()
	t.Setenv("FERRY_MODEL", "")
	cases := []struct {
		name   string
		status int
		args   []string
		want   int
		msg    string
	}{
		{"no model", 0, []string{"-p", "x"}, exitUsage, "no model"},
		{"no prompt", 0, []string{"--model", "openai/fixture", "--base-url", base}, exitUsage, "run needs a prompt"},
		{"bad approval", 0, []string{"--model", "openai/fixture", "--base-url", base, "--approval", "maybe", "-p", "x"}, exitUsage, "approval must be ask, auto, plan or deny"},
		{"bad model", 0, []string{"--model", "fixture", "-p", "x"}, exitUsage, "PROVIDER/MODEL"},
		{"refused key", 401, []string{"--model", "openai/fixture", "--base-url", base, "-p", "x"}, exitAuth, "scripted failure"},
		{"model error", 500, []string{"--model", "openai/fixture", "--base-url", base, "-p", "x"}, exitError, "scripted failure"},
		{"unreachable", 0, []string{"--model", "openai/fixture", "--base-url", gone, "-p", "x"}, exitUnreachable, "connection refused"},
		{"step limit", 0, []string{"--model", "openai/fixture", "--base-url", base, "--approval", "auto", "--max-steps", "1", "-p", `call ex__echo {"message":"x"}`}, exitError, "step limit"},
	}
	for _, tc := range cases {
		f.mu.Lock()
		f.status = tc.status
		f.mu.Unlock()
		code, out, errOut := runFerry(t, "", append([]string{"run", "--config", cfg}, tc.args...)...)
		if code != tc.want || out != "" || !strings.Contains(errOut, tc.msg) {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q", tc.name, code, tc.want, out, errOut)
		}
	}
}

func TestChatPiped(t *testing.T) {
	f, base := startFixture(t)
	t.Setenv("FERRY_STATE_DIR", t.TempDir())
	saved := filepath.Join(t.TempDir(), "chat.json")
	in := strings.Join([]string{
		"hello", `call ex__echo {"message":"hi"}`, "/save " + saved, "/clear", "again", "/load " + saved, "and now",
		"/tools ex", "/servers", "/model", "/nope", "/quit", "never read",
	}, "\n") + "\n"
	code, out, errOut := runFerry(t, in, "chat", "--config", agentConfig(t, `,"agent":{"allow":["ex__echo"]}`), "--model", "openai/fixture", "--base-url", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"ferry chat · openai/fixture · 1 servers,",
		"you said: hello (1 messages)",
		"⚙ ex__echo {\"message\":\"hi\"}", "← ex__echo", "done: hi",
		"(saved 6 messages to " + saved + ")",
		"(the conversation is cleared)",
		"you said: again (1 messages)",
		"(loaded 6 messages from " + saved + ", held with openai/fixture)",
		"you said: and now (7 messages)",
		"ex__echo ", "ex                   ready", "  openai/fixture", "unknown command /nope",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the chat lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "never read") || len(f.requests) != 5 {
		t.Errorf("%d requests; output:\n%s", len(f.requests), out)
	}
	// --continue goes on with the last conversation.
	code, out, _ = runFerry(t, "what now\n", "chat", "--continue", "--config", agentConfig(t, ""), "--model", "openai/fixture", "--base-url", base)
	if code != 0 || !strings.Contains(out, "(going on with the last conversation: 8 messages)") || !strings.Contains(out, "you said: what now (9 messages)") {
		t.Errorf("continue: exit %d:\n%s", code, out)
	}
}

// A server's prompt as a slash command, and a resource attached with
// @SERVER:URI, reach the model as user messages.
func TestChatPromptsAndResources(t *testing.T) {
	f, base := startFixture(t)
	t.Setenv("FERRY_STATE_DIR", t.TempDir())
	in := "/prompts\n/ex:review language=go style=thorough\nwhat is in @ex:ferry://readme ?\n/ex:nope\n@nobody:x stays text\n"
	code, out, errOut := runFerry(t, in, "chat", "--config", agentConfig(t, ""), "--model", "openai/fixture", "--base-url", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"/ex:simple", "/ex:review language=… style=…", "(prompt ex:review added: 1 messages)",
		"(attached ferry://readme from ex)", "! ", "you said: @nobody:x stays text"} {
		if !strings.Contains(out, want) {
			t.Errorf("the chat lacks %q:\n%s", want, out)
		}
	}
	if len(f.requests) != 3 {
		t.Fatalf("%d requests:\n%s", len(f.requests), out)
	}
	text := func(req map[string]any) string {
		msgs := req["messages"].([]any)
		b, _ := json.Marshal(msgs[len(msgs)-1])
		return string(b)
	}
	if got := text(f.requests[0]); !strings.Contains(got, "Please give a thorough review of my go code.") || !strings.Contains(got, `[resource ferry://readme]\n# ferry everything`) {
		t.Errorf("the prompt reached the model as %s", got)
	}
	if got := text(f.requests[1]); !strings.Contains(got, "what is in @ex:ferry://readme ?") || !strings.Contains(got, "An example server exercising every MCP feature.") {
		t.Errorf("the attachment reached the model as %s", got)
	}
}

// --base-url is the URL of the first model's provider: /model that
// switches to another provider does not send it there (Anthropic's SDK
// would post to .../v1/v1/messages), /model P/M URL takes a URL, and
// switching back uses --base-url again.
func TestChatModelSwitchAndBaseURL(t *testing.T) {
	f, base := startFixture(t)
	t.Setenv("FERRY_STATE_DIR", t.TempDir())
	for _, v := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	var mu sync.Mutex
	var paths []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"scripted"}}`)
	}))
	defer other.Close()
	in := strings.Join([]string{
		"/model anthropic/claude-x", "/model anthropic/claude-x " + other.URL, "hello",
		"/model openai/fixture", "back again", "/quit",
	}, "\n") + "\n"
	code, out, errOut := runFerry(t, in, "chat", "--config", agentConfig(t, ""), "--model", "openai/fixture", "--base-url", base)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"! anthropic: no API key", // not the OpenAI fixture's URL with a key of "none"
		"(the model is now anthropic/claude-x)",
		"(the model is now openai/fixture)",
		"you said: back again",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the chat lacks %q:\n%s", want, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "/v1/messages" {
		t.Errorf("anthropic requests at %q", paths)
	}
	if len(f.requests) != 1 {
		t.Errorf("%d requests reached the OpenAI fixture, want 1", len(f.requests))
	}
}
