package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestToolCallEvents: each stage of a call is an event of its own, so
// that a stream shows what the model asked for and what became of it.
func TestToolCallEvents(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	cases := []struct {
		name    string
		policy  *Policy
		call    ToolCall
		kinds   string
		unasked bool
	}{
		{"approved", &Policy{Mode: Auto}, ToolCall{ID: "c", Name: "srv__echo", Arguments: `{"message":"x"}`},
			"tool_asked tool_approved tool_started tool_finished", false},
		{"denied", &Policy{Mode: Deny}, ToolCall{ID: "c", Name: "srv__echo", Arguments: `{}`},
			"tool_asked tool_denied tool_finished", false},
		{"no one to ask", &Policy{Mode: Ask}, ToolCall{ID: "c", Name: "srv__echo", Arguments: `{}`},
			"tool_asked tool_denied tool_finished", true},
		{"unknown tool", &Policy{Mode: Auto}, ToolCall{ID: "c", Name: "srv__nope", Arguments: `{}`},
			"tool_asked tool_finished", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &scripted{script: func(n int, req *Request) (*Reply, error) {
				if n == 1 {
					return calls(tc.call), nil
				}
				return say("ok"), nil
			}}
			var ev events
			a := &Agent{Model: m, Tools: h, Policy: tc.policy, OnEvent: ev.add}
			if _, err := a.Run(context.Background(), Text("go")); err != nil {
				t.Fatal(err)
			}
			var kinds []string
			var last *CallRecord
			for _, e := range ev.all {
				if e.Call != nil {
					kinds = append(kinds, e.Kind.String())
					last = e.Call
				}
			}
			if strings.Join(kinds, " ") != tc.kinds || last.Unasked != tc.unasked {
				t.Errorf("events %v, unasked %v", kinds, last.Unasked)
			}
		})
	}
}

// TestEventJSON: an event is one JSON object, its kind by name, and
// reads back.
func TestEventJSON(t *testing.T) {
	events := []Event{
		{Kind: EventText, Text: "hi"},
		{Kind: EventToolEnd, Call: &CallRecord{ID: "c", Name: "s__t", Server: "s", Tool: "t", Arguments: []byte(`{}`), Denied: true, Unasked: true}},
		{Kind: EventToolProgress, Call: &CallRecord{ID: "c", Arguments: []byte(`{}`)}, Progress: &protocol.ProgressParams{ProgressToken: protocol.ProgressToken("1"), Progress: 1}},
		{Kind: EventSampling, Sampling: &SamplingRecord{Server: "s", RequestedMaxTokens: 100000, MaxTokens: 4096, Usage: Usage{InputTokens: 1}}},
		{Kind: EventElicitation, Elicitation: &ElicitationRecord{Server: "s", Mode: "form", Message: "name?", Action: "decline"}},
		{Kind: EventUsage, Usage: Usage{InputTokens: 3, OutputTokens: 4}},
		{Kind: EventError, Error: &Failure{Message: "stopped", Limit: "steps", Code: 2, Kind: "error"}},
		{Kind: EventResult, Result: &Result{Answer: "a", Calls: []*CallRecord{}, Steps: 1}},
	}
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%v: %v", e.Kind, err)
		}
		if !strings.HasPrefix(string(b), `{"kind":"`+e.Kind.String()+`"`) || strings.Contains(string(b), "\n") {
			t.Errorf("%s", b)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil || back.Kind != e.Kind {
			t.Errorf("%s read back as %v: %v", b, back.Kind, err)
		}
	}
	if b, err := json.Marshal(Event{}); err == nil {
		t.Errorf("an event of no kind was written: %s", b)
	}
}
