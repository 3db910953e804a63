package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

func TestOneToolCallThenAnswer(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		if n == 1 {
			return calls(ToolCall{ID: "c1", Name: "srv__echo", Arguments: `{"message":"hi"}`}), nil
		}
		return say("The tool said: " + lastResults(t, *req)[0].Text()), nil
	}}
	var ev events
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add}
	res, err := a.Run(context.Background(), Text("say hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "The tool said: echo: hi" {
		t.Errorf("answer %q", res.Answer)
	}
	if res.Steps != 2 || len(res.Calls) != 1 || res.Calls[0].Server != "srv" || res.Calls[0].Tool != "echo" {
		t.Errorf("result %+v, calls %+v", res, res.Calls)
	}
	if res.Usage != (Usage{InputTokens: 20, OutputTokens: 10}) {
		t.Errorf("usage %+v", res.Usage)
	}
	reqs := m.requests()
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "srv__echo" || reqs[0].Tools[0].Description != "Echoes the message" {
		t.Errorf("tools %+v", reqs[0].Tools)
	}
	if starts, ends := ev.of(EventToolStart), ev.of(EventToolEnd); len(starts) != 1 || len(ends) != 1 || ends[0].Call.Result != "echo: hi" {
		t.Errorf("events: %d starts, %d ends %+v", len(starts), len(ends), ends)
	}
	if u := ev.of(EventUsage); len(u) != 1 || u[0].Usage.Total() != 30 {
		t.Errorf("usage events %+v", u)
	}
	mustCheck(t, a.Conversation)
}

// Two calls of one reply run at the same time: each waits for the other
// to start, which would never happen if they ran one after the other.
func TestParallelCallsRunTogetherAndAnswerTogether(t *testing.T) {
	s := newServer("srv")
	var arrived sync.WaitGroup
	arrived.Add(2)
	server.AddTool(s, &protocol.Tool{Name: "meet"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		arrived.Done()
		done := make(chan struct{})
		go func() { arrived.Wait(); close(done) }()
		select {
		case <-done:
			return "met " + in.Message, nil
		case <-time.After(5 * time.Second):
			return "", errors.New("the other call never came: calls ran one at a time")
		}
	})
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		if n == 1 {
			return calls(ToolCall{ID: "a", Name: "srv__meet", Arguments: `{"message":"A"}`},
				ToolCall{ID: "b", Name: "srv__meet", Arguments: `{"message":"B"}`}), nil
		}
		return say("done"), nil
	}}
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
	if _, err := a.Run(context.Background(), Text("go")); err != nil {
		t.Fatal(err)
	}
	results := lastResults(t, m.requests()[1])
	if len(results) != 2 || results[0].CallID != "a" || results[1].CallID != "b" ||
		results[0].Text() != "met A" || results[1].Text() != "met B" || results[0].IsError || results[1].IsError {
		t.Fatalf("results %+v %+v", results[0], results[1])
	}
}

// A call whose arguments are not a JSON object gets an error result (the
// tool is not called), and the loop goes on.
func TestInvalidArgumentsAreAToolError(t *testing.T) {
	s := newServer("srv")
	called := 0
	server.AddTool(s, &protocol.Tool{Name: "count"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		called++
		return "ok", nil
	})
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	cases := []struct{ args, want string }{
		{`{"message": "unterminated`, "not a JSON object (invalid JSON"},
		{`[1,2]`, "a JSON array was given"},
		{`"text"`, "a JSON string was given"},
	}
	for _, tc := range cases {
		m := &scripted{script: func(n int, req *Request) (*Reply, error) {
			if n == 1 {
				return calls(ToolCall{ID: "c", Name: "srv__count", Arguments: tc.args}), nil
			}
			return say("sorry"), nil
		}}
		a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
		res, err := a.Run(context.Background(), Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		r := lastResults(t, m.requests()[1])[0]
		if !r.IsError || !strings.Contains(r.Text(), tc.want) || !res.Calls[0].IsError {
			t.Errorf("%s: result %+v", tc.args, r)
		}
		if string(res.Calls[0].Arguments) == tc.args && tc.args[0] != '{' {
			// recorded as a JSON string holding the text
		}
	}
	if called != 0 {
		t.Errorf("the tool ran %d times", called)
	}
	// Empty arguments are no arguments.
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		if n == 1 {
			return calls(ToolCall{ID: "c", Name: "srv__count", Arguments: ""}), nil
		}
		return say("ok"), nil
	}}
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
	if _, err := a.Run(context.Background(), Text("go")); err != nil {
		t.Fatal(err)
	}
	if r := lastResults(t, m.requests()[1])[0]; r.IsError || called != 1 {
		t.Errorf("empty arguments: %+v, called %d", r, called)
	}
}

func TestUnknownToolIsAToolError(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		if n == 1 {
			return calls(ToolCall{ID: "c", Name: "srv__nope", Arguments: `{}`}), nil
		}
		return say("ok"), nil
	}}
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
	if _, err := a.Run(context.Background(), Text("go")); err != nil {
		t.Fatal(err)
	}
	if r := lastResults(t, m.requests()[1])[0]; !r.IsError || !strings.Contains(r.Text(), `no tool named "srv__nope"`) {
		t.Errorf("result %+v", r)
	}
}

func TestApproval(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	server.AddTool(s, &protocol.Tool{Name: "look", Annotations: &protocol.ToolAnnotations{ReadOnlyHint: ptr(true)}},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "seen", nil })
	server.AddTool(s, &protocol.Tool{Name: "wipe"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "wiped", nil })
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	run := func(p *Policy, tool string) (*ToolResult, *CallRecord) {
		t.Helper()
		m := &scripted{script: func(n int, req *Request) (*Reply, error) {
			if n == 1 {
				return calls(ToolCall{ID: "c", Name: tool, Arguments: `{}`}), nil
			}
			return say("ok"), nil
		}}
		a := &Agent{Model: m, Tools: h, Policy: p}
		res, err := a.Run(context.Background(), Text("go"))
		if err != nil {
			t.Fatal(err)
		}
		return lastResults(t, m.requests()[1])[0], res.Calls[0]
	}
	var asked []*Question
	answer := Refuse
	ask := func(ctx context.Context, q *Question) (Answer, error) {
		asked = append(asked, q)
		return answer, nil
	}
	cases := []struct {
		name   string
		policy *Policy
		tool   string
		ran    bool
		reason string
	}{
		{"auto", &Policy{Mode: Auto}, "srv__wipe", true, ""},
		{"deny mode", &Policy{Mode: Deny}, "srv__look", false, "denied (approval mode deny)"},
		{"deny list first", &Policy{Mode: Auto, Deny: []string{"srv__w*"}, Allow: []string{"srv__wipe"}}, "srv__wipe", false, `configuration denies this tool ("srv__w*")`},
		{"allow list", &Policy{Mode: Ask, Allow: []string{"srv__*"}}, "srv__wipe", true, ""},
		{"deny mode beats the allow list", &Policy{Mode: Deny, Allow: []string{"srv__*"}}, "srv__look", false, "denied (approval mode deny)"},
		{"ask without a terminal", &Policy{Mode: Ask}, "srv__echo", false, "no terminal to ask"},
		{"ask, refused", &Policy{Mode: Ask, Ask: ask}, "srv__wipe", false, "the user denied it"},
		{"no policy", nil, "srv__echo", false, "no approval policy"},
	}
	for _, tc := range cases {
		r, rec := run(tc.policy, tc.tool)
		if tc.ran {
			if r.IsError || rec.Denied {
				t.Errorf("%s: %+v", tc.name, r)
			}
			continue
		}
		if !r.IsError || !rec.Denied || !strings.Contains(r.Text(), tc.reason) {
			t.Errorf("%s: result %q denied=%v", tc.name, r.Text(), rec.Denied)
		}
	}
	if len(asked) != 1 || asked[0].Name != "srv__wipe" || !asked[0].Destructive || asked[0].ReadOnly {
		t.Fatalf("asked %+v", asked)
	}

	// A read-only tool allowed for the session is not asked about again;
	// a tool that is not read-only is.
	p := &Policy{Mode: Ask, Ask: ask}
	asked, answer = nil, AllowSession
	for range 2 {
		if r, _ := run(p, "srv__look"); r.IsError {
			t.Fatalf("look: %+v", r)
		}
		if r, _ := run(p, "srv__wipe"); r.IsError {
			t.Fatalf("wipe: %+v", r)
		}
	}
	var names []string
	for _, q := range asked {
		names = append(names, q.Name)
	}
	if strings.Join(names, " ") != "srv__look srv__wipe srv__wipe" || !asked[0].ReadOnly || asked[0].Destructive {
		t.Errorf("asked about %v (%+v)", names, asked[0])
	}
}

func TestStepLimitLeavesAValidConversation(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		return calls(ToolCall{ID: "c" + string(rune('0'+n)), Name: "srv__echo", Arguments: `{"message":"again"}`}), nil
	}}
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, Limits: Limits{MaxSteps: 3}}
	res, err := a.Run(context.Background(), Text("loop"))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "steps" || res.Steps != 3 || len(res.Calls) != 3 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	mustCheck(t, a.Conversation)
	// The default is 25.
	a = &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
	m.reqs = nil
	if _, err := a.Run(context.Background(), Text("loop")); !errors.As(err, &le) || len(m.requests()) != DefaultMaxSteps {
		t.Fatalf("err %v after %d requests", err, len(m.requests()))
	}
}

func TestTokenLimit(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		return calls(ToolCall{ID: "c", Name: "srv__echo", Arguments: `{}`}), nil
	}}
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, Limits: Limits{MaxTokens: 40}}
	res, err := a.Run(context.Background(), Text("loop"))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "tokens" || res.Steps != 3 || res.Usage.Total() != 45 {
		t.Fatalf("err %v, result %+v", err, res)
	}
	mustCheck(t, a.Conversation)
}

// Cancelling the turn cancels the calls in flight: the server's handler
// sees notifications/cancelled, the model's conversation gets a result
// saying so, and the agent can go on with the next turn.
func TestCancelStopsCallsInFlight(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	seen := make(chan error, 1)
	server.AddTool(s, &protocol.Tool{Name: "block"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		<-ctx.Done()
		seen <- context.Cause(ctx)
		return "", context.Cause(ctx)
	})
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		switch n {
		case 1:
			return calls(ToolCall{ID: "b", Name: "srv__block", Arguments: `{}`}, ToolCall{ID: "e", Name: "srv__echo", Arguments: `{"message":"x"}`}), nil
		}
		return say("next turn"), nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: func(e Event) {
		if e.Kind == EventToolStart && e.Call.Tool == "block" {
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		}
	}}
	res, err := a.Run(ctx, Text("block"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	select {
	case cause := <-seen:
		if !strings.Contains(cause.Error(), "cancelled by the peer") {
			t.Errorf("the server's handler ended with %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server never saw the cancellation")
	}
	if !strings.Contains(res.Calls[0].Error, "cancelled by the user") {
		t.Errorf("call record %+v", res.Calls[0])
	}
	mustCheck(t, a.Conversation)
	// The chat goes on.
	res, err = a.Run(context.Background(), Text("and now?"))
	if err != nil || res.Answer != "next turn" {
		t.Fatalf("next turn: %v %+v", err, res)
	}
	last := m.requests()[1].Messages
	if len(last) != 4 || last[2].Role != Tool || last[3].Role != User {
		t.Errorf("messages %s", describeMessages(last))
	}
}

func TestToolResultContent(t *testing.T) {
	png := []byte("\x89PNG fake")
	res := &protocol.CallToolResult{
		Content: []protocol.Content{
			protocol.TextContent("hello"),
			protocol.ImageContent(png, "image/png"),
			protocol.AudioContent([]byte("RIFF...."), "audio/wav"),
			protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a.txt", Name: "a", MIMEType: "text/plain", Description: "a file"}),
			protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "mem://x", Text: "inside"}),
			protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "mem://bin", MIMEType: "application/zip", Blob: "AAAA"}),
		},
		StructuredContent: []byte(`{"temp": 21}`),
	}
	parts := toolResult(res, DefaultMaxImageBytes)
	want := []string{
		"text:hello",
		"image:image/png:9",
		"text:[audio (audio/wav, 8 bytes), not given to the model]",
		"text:[resource link: file:///a.txt (name a, type text/plain): a file]",
		"text:[resource mem://x]\ninside",
		"text:[resource mem://bin: application/zip, 3 bytes of binary data, not given to the model]",
		`text:structuredContent: {"temp":21}`,
	}
	if len(parts) != len(want) {
		t.Fatalf("parts %+v", parts)
	}
	for i, p := range parts {
		got := string(p.Type) + ":" + p.Text
		if p.Type == ImagePart {
			got = "image:" + p.MIMEType + ":" + string(rune('0'+len(p.Data)))
		}
		if got != want[i] {
			t.Errorf("part %d = %q, want %q", i, got, want[i])
		}
	}
	// Structured content already given as text is not repeated.
	parts = toolResult(&protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("{\n \"temp\": 21\n}")}, StructuredContent: []byte(`{"temp":21}`)}, -1)
	if len(parts) != 1 {
		t.Errorf("structured repeated: %+v", parts)
	}
	// An image over the limit is left out with a note.
	parts = toolResult(&protocol.CallToolResult{Content: []protocol.Content{protocol.ImageContent(png, "image/png")}}, 4)
	if len(parts) != 1 || parts[0].Type != TextPart || !strings.Contains(parts[0].Text, "was left out: the limit is 4 bytes") {
		t.Errorf("image over the limit: %+v", parts)
	}
}

func TestToolListChangesArePickedUp(t *testing.T) {
	s := newServer("srv")
	addEcho(s)
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		switch n {
		case 1:
			return calls(ToolCall{ID: "c", Name: "srv__echo", Arguments: `{"message":"x"}`}), nil
		case 2:
			return say("first"), nil
		case 3:
			return calls(ToolCall{ID: "d", Name: "srv__fresh", Arguments: `{}`}), nil
		}
		return say("second"), nil
	}}
	var ev events
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add}
	if _, err := a.Run(context.Background(), Text("one")); err != nil {
		t.Fatal(err)
	}
	server.AddTool(s, &protocol.Tool{Name: "fresh"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "fresh result", nil
	})
	// The list_changed notification reaches the host asynchronously.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tools, _ := h.Tools(context.Background())
		if len(tools) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := a.Run(context.Background(), Text("two")); err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	if len(reqs[2].Tools) != 2 {
		t.Errorf("the third request has %d tools", len(reqs[2].Tools))
	}
	if r := lastResults(t, reqs[3])[0]; r.IsError || r.Text() != "fresh result" {
		t.Errorf("result %+v", r)
	}
	changed := ev.of(EventToolsChanged)
	if len(changed) != 1 || len(changed[0].Added) != 1 || changed[0].Added[0] != "srv__fresh" {
		t.Errorf("changes %+v", changed)
	}
}

func TestSchemasCrowdingTheContextAreWarnedOf(t *testing.T) {
	s := newServer("srv")
	for _, n := range []string{"a", "b", "c"} {
		server.AddTool(s, &protocol.Tool{Name: n, Description: strings.Repeat("word ", 200)},
			func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "", nil })
	}
	h := startHost(t, map[string]*server.Server{"srv": s}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) { return say("ok"), nil }}
	var ev events
	// A server's tools alone may take what crowds the context; several
	// servers' together do.
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add, Limits: Limits{ContextTokens: 2000, MaxServerToolBytes: -1}}
	for range 2 {
		if _, err := a.Run(context.Background(), Text("hi")); err != nil {
			t.Fatal(err)
		}
	}
	w := ev.of(EventWarning)
	if len(w) != 1 || !strings.Contains(w[0].Text, "the 3 tools' descriptions and schemas take about") {
		t.Fatalf("warnings %+v", w)
	}
	// Within a large context: no warning.
	ev = events{}
	a = &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add}
	if _, err := a.Run(context.Background(), Text("hi")); err != nil || len(ev.of(EventWarning)) != 0 {
		t.Fatalf("%v %+v", err, ev.of(EventWarning))
	}
}

func TestSchemaForModel(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, `{"type":"object","properties":{}}`},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, `{"type":"object","properties":{"a":{"type":"string"}}}`},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, `{"type":"object"}`},
		{`{"properties":{}}`, `{"properties":{},"type":"object"}`},
	}
	for _, tc := range cases {
		if got := string(schemaForModel([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestModelErrorsEndTheTurn(t *testing.T) {
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		return nil, &ModelError{Provider: "p", Kind: ModelAuth, Status: 401, Err: errors.New("bad key")}
	}}
	a := &Agent{Model: m}
	_, err := a.Run(context.Background(), Text("hi"))
	if k, ok := ModelErrorKind(err); !ok || k != ModelAuth {
		t.Fatalf("err %v", err)
	}
}
