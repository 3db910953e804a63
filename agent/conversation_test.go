package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
)

func TestConversationSavedAndLoaded(t *testing.T) {
	c := &Conversation{Model: "openai/gpt-4o", System: "be brief", Usage: Usage{InputTokens: 3, OutputTokens: 4}, Messages: []Message{
		UserMessage(Text("hi"), Image([]byte{1, 2, 3}, "image/png")),
		{Role: Assistant, Parts: []Part{Text("calling"), {Type: ToolCallPart, Call: &ToolCall{ID: "c1", Name: "s__t", Arguments: `{"a":1}`}}}},
		{Role: Tool, Parts: []Part{{Type: ToolResultPart, Result: &ToolResult{CallID: "c1", Name: "s__t", Content: []Part{Text("r")}, IsError: true}}}},
		{Role: Assistant, Parts: []Part{Text("done")}},
	}}
	path := filepath.Join(t.TempDir(), "chat.json")
	if err := c.Save(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", fi.Mode(), err)
	}
	got, err := LoadConversation(path)
	if err != nil {
		t.Fatal(err)
	}
	c.Format = ConversationFormat
	if !reflect.DeepEqual(got, c) {
		t.Errorf("loaded %+v\nsaved %+v", got, c)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"format": "ferry.conversation/1"`) || !strings.Contains(string(data), `"data": "AQID"`) {
		t.Errorf("file:\n%s", data)
	}
}

func TestLoadRejectsConversationsThatCannotBeSent(t *testing.T) {
	cases := map[string]string{
		`{}`: "format",
		`{"format":"ferry.conversation/1","messages":[{"role":"system","parts":[]}]}`:                                                                                                 "unknown role",
		`{"format":"ferry.conversation/1","messages":[{"role":"assistant","parts":[{"type":"tool_call","call":{"id":"x","name":"t","arguments":"{}"}}]}]}`:                            "no results",
		`{"format":"ferry.conversation/1","messages":[{"role":"assistant","parts":[{"type":"tool_call","call":{"id":"x","name":"t","arguments":"{}"}}]},{"role":"tool","parts":[]}]}`: "answered 0 times",
		`not json`: "not a saved conversation",
	}
	for in, want := range cases {
		if _, err := ParseConversation([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

func TestSettings(t *testing.T) {
	t.Setenv("FERRY_TEST_KEY", "sk-test")
	f, err := config.Parse("/x/c.json", []byte(`{"mcpServers":{"a":{"command":"a"}},
	  "agent":{"model":"openai/gpt-4o","approval":"ask","allow":["a__*"],"deny":["*__rm"],
	    "sampling":{"allow":["a"]},"maxSteps":7,"maxSamplingTokens":500,"maxToolBytes":1000,"maxServerToolBytes":-1,
	    "providers":{"openai":{"apiKey":"${FERRY_TEST_KEY}","baseURL":"http://127.0.0.1:1/v1"}}}}`), config.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSettings(f, &config.DefaultOptions().Vars)
	if err != nil {
		t.Fatal(err)
	}
	if lim := s.Limits(); lim.MaxSteps != 7 || lim.MaxSamplingTokens != 500 || lim.MaxToolBytes != 1000 || lim.MaxServerToolBytes != -1 {
		t.Errorf("limits %+v", lim)
	}
	if s.Model != "openai/gpt-4o" || s.Approval != "ask" || s.MaxSteps != 7 || s.Sampling.Allow[0] != "a" ||
		s.Providers["openai"].APIKey != "sk-test" || s.Providers["openai"].BaseURL != "http://127.0.0.1:1/v1" {
		t.Errorf("settings %+v", s)
	}
	merged := (&Settings{Model: "anthropic/claude", Deny: []string{"x"}}).Merge(s)
	if merged.Model != "anthropic/claude" || merged.Approval != "ask" || len(merged.Deny) != 2 || merged.Providers["openai"].APIKey != "sk-test" ||
		merged.MaxToolBytes != 1000 || merged.MaxSamplingTokens != 500 {
		t.Errorf("merged %+v", merged)
	}
	for in, want := range map[string]string{
		`{"approval":"sometimes"}`: "approval must be ask, auto, plan or deny",
		`{"modle":"x"}`:            "unknown",
		`{"providers":{"o":{"apiKey":"${FERRY_UNSET_VAR_X}"}}}`: "FERRY_UNSET_VAR_X",
	} {
		if _, err := parseSettings("c.json", []byte(in), &config.DefaultOptions().Vars); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", in, err)
		}
	}
}
