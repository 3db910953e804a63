package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// samplingServer has a tool that asks the client's model, with the
// request its arguments describe, and reports the answer.
func samplingServer() *server.Server {
	s := newServer("smp")
	addEcho(s)
	type in struct {
		Prompt string `json:"prompt"`
		Tools  bool   `json:"tools,omitempty"`
	}
	server.AddTool(s, &protocol.Tool{Name: "ask_model"}, func(ctx context.Context, req *server.Request, in in) (string, error) {
		p := &protocol.CreateMessageParams{
			Messages:     []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent(in.Prompt)}}},
			SystemPrompt: "You are a test server.",
			MaxTokens:    77,
		}
		if in.Tools {
			p.Tools = []protocol.Tool{{Name: "weather/get", Description: "The weather", InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
			p.ToolChoice = &protocol.ToolChoice{Mode: "required"}
		}
		res, err := req.CreateMessage(ctx, p)
		if err != nil {
			return "", err
		}
		out, _ := json.Marshal(res)
		return string(out), nil
	})
	return s
}

func TestSamplingIsAnsweredByTheAgentsModel(t *testing.T) {
	for _, era := range []string{"", protocol.LatestLegacyVersion} {
		name := "stateless"
		if era != "" {
			name = era
		}
		t.Run(name, func(t *testing.T) {
			var a *Agent
			h := startHost(t, map[string]*server.Server{"smp": samplingServer()}, func(srv string) *client.Options {
				return &client.Options{ProtocolVersion: era, Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					return a.Sample(ctx, srv, p)
				}}
			})
			m := &scripted{script: func(n int, req *Request) (*Reply, error) {
				switch {
				case req.System == "You are a test server." && len(req.Tools) == 1:
					// A sampling request with the server's own tools.
					return &Reply{Message: Message{Parts: []Part{{Type: ToolCallPart, Call: &ToolCall{ID: "t1", Name: req.Tools[0].Name, Arguments: `{"city":"Paris"}`}}}},
						Stop: ToolUse, Model: "m-1", Usage: Usage{InputTokens: 3, OutputTokens: 4}}, nil
				case req.System == "You are a test server.":
					return &Reply{Message: Message{Parts: []Part{Text("sampled: " + req.Messages[0].Text())}}, Stop: MaxTokens, Model: "m-1",
						Usage: Usage{InputTokens: 3, OutputTokens: 4}}, nil
				}
				if len(req.Messages) == 1 {
					args := `{"prompt":"hello"}`
					if strings.Contains(req.Messages[0].Text(), "tools") {
						args = `{"prompt":"weather","tools":true}`
					}
					return calls(ToolCall{ID: "c", Name: "smp__ask_model", Arguments: args}), nil
				}
				return say(lastResults(t, *req)[0].Text()), nil
			}}
			var ev events
			a = &Agent{Model: m, ModelName: "fake/model", Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add}
			res, err := a.Run(context.Background(), Text("sample"))
			if err != nil {
				t.Fatal(err)
			}
			var got protocol.CreateMessageResult
			if err := json.Unmarshal([]byte(res.Answer), &got); err != nil {
				t.Fatalf("answer %q: %v", res.Answer, err)
			}
			if got.Content[0].Text != "sampled: hello" || got.StopReason != "maxTokens" || got.Model != "m-1" || got.Role != protocol.RoleAssistant {
				t.Errorf("sampling result %+v", got)
			}
			reqs := m.requests()
			sreq := reqs[1]
			if len(sreq.Tools) != 0 || sreq.MaxTokens != 77 || len(sreq.Messages) != 1 {
				t.Errorf("the sampling request got %d tools (the host's must not be given), maxTokens %d", len(sreq.Tools), sreq.MaxTokens)
			}
			if res.Usage.Total() != 2*15+7 {
				t.Errorf("the turn's usage %+v leaves out the sampling", res.Usage)
			}
			if s := ev.of(EventSampling); len(s) != 1 || s[0].Sampling.Server != "smp" || s[0].Sampling.Refused != "" {
				t.Errorf("sampling events %+v", s)
			}

			// With the server's tools: their names are mapped to the
			// providers' rules and back.
			a.Conversation = nil
			res, err = a.Run(context.Background(), Text("sample with tools"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(res.Answer), &got); err != nil {
				t.Fatalf("answer %q: %v", res.Answer, err)
			}
			c := got.Content[0]
			if c.Type != protocol.ContentToolUse || c.Name != "weather/get" || c.ID != "t1" || c.Input["city"] != "Paris" || got.StopReason != "toolUse" {
				t.Errorf("tool use %+v, stop %q", c, got.StopReason)
			}
			sreq = m.requests()[4]
			if len(sreq.Tools) != 1 || sreq.Tools[0].Name == "weather/get" || !validName(sreq.Tools[0].Name) || sreq.ToolChoice != "required" {
				t.Errorf("sampling tools %+v choice %q", sreq.Tools, sreq.ToolChoice)
			}

			// Refused by the policy: the server gets "User rejected
			// sampling request" (-1).
			a.Conversation, a.Policy = nil, &Policy{Mode: Auto, SamplingDeny: []string{"smp"}}
			res, err = a.Run(context.Background(), Text("sample"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Answer, "User rejected sampling request") || !res.Calls[0].IsError {
				t.Errorf("refused sampling: %q", res.Answer)
			}
		})
	}
}

func TestSamplingMessagesMustBeBalanced(t *testing.T) {
	use := protocol.Content{Type: protocol.ContentToolUse, ID: "u1", Name: "t", Input: map[string]any{}}
	result := protocol.Content{Type: protocol.ContentToolResult, ToolUseID: "u1", Content: []protocol.Content{protocol.TextContent("r")}}
	user := func(c ...protocol.Content) protocol.SamplingMessage {
		return protocol.SamplingMessage{Role: protocol.RoleUser, Content: c}
	}
	asst := func(c ...protocol.Content) protocol.SamplingMessage {
		return protocol.SamplingMessage{Role: protocol.RoleAssistant, Content: c}
	}
	cases := []struct {
		msgs []protocol.SamplingMessage
		want string
	}{
		{[]protocol.SamplingMessage{user(protocol.TextContent("q")), asst(use), user(result)}, ""},
		{[]protocol.SamplingMessage{user(protocol.TextContent("q")), asst(use)}, "Tool result missing in request"},
		{[]protocol.SamplingMessage{user(protocol.TextContent("q")), asst(use), user(protocol.TextContent("x"))}, "Tool result missing in request"},
		{[]protocol.SamplingMessage{user(protocol.TextContent("q")), asst(use), user(result, protocol.TextContent("x"))}, "Tool results mixed with other content"},
	}
	for i, tc := range cases {
		err := checkSamplingMessages(tc.msgs)
		if fmt.Sprint(err) != tc.want && !(err == nil && tc.want == "") && !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("case %d: %v, want %q", i, err, tc.want)
		}
		if (err == nil) != (tc.want == "") {
			t.Errorf("case %d: %v, want %q", i, err, tc.want)
		}
	}
	// A balanced conversation translates to tool calls and results.
	names := NewNames([]string{"t"})
	msgs := samplingMessages(cases[0].msgs, names)
	if len(msgs) != 3 || msgs[1].Role != Assistant || msgs[2].Role != Tool || msgs[2].Parts[0].Result.Name != "t" || msgs[2].Parts[0].Result.Text() != "r" {
		t.Errorf("messages %s %+v", describeMessages(msgs), msgs[2].Parts[0].Result)
	}
}

func TestNamesAreValidReversibleAndDistinct(t *testing.T) {
	long := strings.Repeat("x", 80)
	in := []string{"a_b", "a.b", "a/b", "a b", "read-file", long, long + "y", "", "日本"}
	n := NewNames(in)
	seen := map[string]string{}
	for _, name := range in {
		m := n.Model(name)
		if !validName(m) {
			t.Errorf("%q -> %q breaks the rules", name, m)
		}
		if prev, dup := seen[m]; dup {
			t.Errorf("%q and %q both -> %q", prev, name, m)
		}
		seen[m] = name
		if back, ok := n.Tool(m); !ok || back != name {
			t.Errorf("%q -> %q -> %q", name, m, back)
		}
	}
	if n.Model("a_b") != "a_b" || n.Model("read-file") != "read-file" {
		t.Error("valid names must stay as they are")
	}
	// The map of a name does not depend on the other names.
	if NewNames([]string{"a.b"}).Model("a.b") != n.Model("a.b") {
		t.Error("the map of a.b changed with the list")
	}
}
