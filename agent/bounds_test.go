package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// greedyServer has a tool that asks the client's model again and again,
// each time for 100,000 tokens (as a server seen in issue 31 did), until
// it is refused or has asked maxAsks times.
const maxAsks = 40

func greedyServer() *server.Server {
	s := newServer("greedy")
	server.AddTool(s, &protocol.Tool{Name: "loop"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		for i := range maxAsks {
			_, err := req.CreateMessage(ctx, &protocol.CreateMessageParams{
				Messages:     []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("more")}}},
				SystemPrompt: "greedy",
				MaxTokens:    100_000,
			})
			if err != nil {
				return fmt.Sprintf("%d answered, then: %v", i, err), nil
			}
		}
		return fmt.Sprintf("%d answered", maxAsks), nil
	})
	return s
}

// TestSamplingCountsAgainstTheTurn: a server's sampling requests are
// model requests of the turn, counted before they are made against its
// step and token limits, their maxTokens lowered to the host's cap and
// to what the token limit leaves (issue 31: at b211c63 one turn made
// every request the server asked for, each with its 100,000 tokens).
func TestSamplingCountsAgainstTheTurn(t *testing.T) {
	cases := []struct {
		name      string
		limits    Limits
		requests  int    // model requests, the turn's and sampling's
		limit     string // the limit that stopped the turn
		maxTokens int64  // the largest reply cap a sampling request had (at most, with a token limit)
	}{
		{"the step limit", Limits{MaxSteps: 5}, 5, "steps", DefaultMaxSamplingTokens},
		{"the default step limit", Limits{}, DefaultMaxSteps, "steps", DefaultMaxSamplingTokens},
		{"the token limit", Limits{MaxTokens: 1000}, 11, "tokens", 1000},
		{"the host's cap", Limits{MaxSteps: 50, MaxSamplingTokens: 300}, maxAsks + 2, "", 300},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a *Agent
			h := startHost(t, map[string]*server.Server{"greedy": greedyServer()}, func(srv string) *client.Options {
				// A legacy session: the stateless era's client stops a
				// call after 10 rounds of input of its own.
				return &client.Options{ProtocolVersion: protocol.LatestLegacyVersion, Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					return a.Sample(ctx, srv, p)
				}}
			})
			m := &scripted{script: func(n int, req *Request) (*Reply, error) {
				switch {
				case req.System == "greedy":
					r := say("more")
					r.Usage = Usage{InputTokens: 10, OutputTokens: min(90, req.MaxTokens)}
					return r, nil
				case len(req.Messages) == 1:
					return calls(ToolCall{ID: "c", Name: "greedy__loop", Arguments: `{}`}), nil
				}
				return say("done"), nil
			}}
			a = &Agent{Model: m, ModelName: "fake/model", Tools: h, Policy: &Policy{Mode: Auto}, Limits: tc.limits}
			res, err := a.Run(context.Background(), Text("go"))
			var le *LimitError
			if tc.limit == "" && err != nil || tc.limit != "" && (!errors.As(err, &le) || le.Limit != tc.limit) {
				t.Fatalf("err %v, want the %q limit", err, tc.limit)
			}
			reqs := m.requests()
			if len(reqs) != tc.requests || res.Steps != tc.requests {
				t.Errorf("%d model requests, %d steps reported; want %d", len(reqs), res.Steps, tc.requests)
			}
			var used, most int64 = 15, 0 // the turn's first request
			for i, r := range reqs {
				if r.System != "greedy" {
					continue
				}
				if tc.limits.MaxTokens > 0 && used+r.MaxTokens > tc.limits.MaxTokens || r.MaxTokens <= 0 {
					t.Errorf("sampling request %d may take %d tokens after %d of %d", i, r.MaxTokens, used, tc.limits.MaxTokens)
				}
				used += 10 + min(90, r.MaxTokens)
				most = max(most, r.MaxTokens)
			}
			if most > tc.maxTokens || tc.limits.MaxTokens == 0 && most != tc.maxTokens {
				t.Errorf("the largest reply cap was %d, want %d", most, tc.maxTokens)
			}
			if got := res.Usage.Total(); got != used+int64(len(reqs)-1-samplingCount(reqs))*15 {
				t.Errorf("usage %d, the requests used %d", got, used)
			}
			if len(res.Sampling) != 1 || res.Sampling[0].Server != "greedy" || res.Sampling[0].Requests != samplingCount(reqs) {
				t.Errorf("sampling by server %+v", res.Sampling)
			}
			mustCheck(t, a.Conversation)
		})
	}
}

func samplingCount(reqs []Request) int {
	n := 0
	for _, r := range reqs {
		if r.System == "greedy" {
			n++
		}
	}
	return n
}

// TestSamplingAtTheSameTimeStaysWithinTheTokens: a request sets aside
// what it may use until it is answered, so that requests in flight
// together stay within the token limit. Each request here makes the
// next while the model answers it.
func TestSamplingAtTheSameTimeStaysWithinTheTokens(t *testing.T) {
	p := &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: protocol.SamplingContent{protocol.TextContent("hi")}}},
		MaxTokens: 400,
	}
	var a *Agent
	var granted int64
	var refused []error
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		granted += req.MaxTokens
		if n < 4 {
			if _, err := a.Sample(context.Background(), "srv", p); err != nil {
				refused = append(refused, err)
			}
		}
		return say("ok"), nil
	}}
	a = &Agent{Model: m, ModelName: "fake/model", Policy: &Policy{Mode: Auto}, Limits: Limits{MaxTokens: 1000}}
	if _, err := a.Sample(context.Background(), "srv", p); err != nil {
		t.Fatal(err)
	}
	// 400, 400, then what is left; the fourth is refused.
	if len(m.requests()) != 3 || granted > 1000 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "limit of 1000 tokens") {
		t.Errorf("%d requests, granted %d tokens together, refused: %v", len(m.requests()), granted, refused)
	}
}

// TestToolDefinitionsAreBounded: a tool whose definition is larger than
// the limit of a tool, and a server's tools beyond the limit of a
// server, are left out of the model's request, with a warning naming
// them (issue 31: at b211c63 1,015 tools sent 15.4 MB in every request).
func TestToolDefinitionsAreBounded(t *testing.T) {
	s := newServer("big")
	noop := func(ctx context.Context, req *server.Request, in struct{}) (string, error) { return "", nil }
	server.AddTool(s, &protocol.Tool{Name: "manual", Description: strings.Repeat("word ", 4000)}, noop)
	for i := range 100 {
		server.AddTool(s, &protocol.Tool{Name: fmt.Sprintf("t%03d", i), Description: strings.Repeat("x", 480)}, noop)
	}
	small := newServer("small")
	addEcho(small)
	h := startHost(t, map[string]*server.Server{"big": s, "small": small}, nil)
	m := &scripted{script: func(n int, req *Request) (*Reply, error) { return say("ok"), nil }}
	var ev events
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, OnEvent: ev.add, Limits: Limits{ContextTokens: 20_000}}
	for turn := range 2 {
		res, err := a.Run(context.Background(), Text("hi"))
		if err != nil {
			t.Fatal(err)
		}
		// The result has the turn's warnings: the notes once.
		if notes := strings.Count(strings.Join(res.Warnings, "\n"), "left out"); notes != 2-2*turn {
			t.Errorf("turn %d: warnings %q", turn+1, res.Warnings)
		}
	}
	req := m.requests()[0]
	size := map[string]int{}
	has := map[string]bool{}
	for _, spec := range req.Tools {
		server, _, _ := strings.Cut(spec.Name, "__")
		size[server] += len(spec.Name) + len(spec.Description) + len(spec.Schema)
		has[spec.Name] = true
	}
	if has["big__manual"] || !has["big__t000"] || has["big__t099"] || !has["small__echo"] || size["big"] > 20_000 {
		t.Errorf("the model was given %d tools, %v bytes", len(req.Tools), size)
	}
	var warned []string
	for _, w := range ev.of(EventWarning) {
		if strings.Contains(w.Text, "left out") {
			warned = append(warned, w.Text)
		}
	}
	text := strings.Join(warned, "\n")
	if len(warned) != 2 || !strings.Contains(text, "1 tools are left out") || !strings.Contains(text, "big__manual") ||
		!strings.Contains(text, `of server "big" are left out`) || !strings.Contains(text, "and ") {
		t.Errorf("warnings (once each over two turns):\n%s", text)
	}
	// Calling a tool left out is calling a tool the model does not have.
	m.script = func(n int, req *Request) (*Reply, error) {
		if n == 3 {
			return calls(ToolCall{ID: "c", Name: "big__manual", Arguments: `{}`}), nil
		}
		return say("ok"), nil
	}
	res, err := a.Run(context.Background(), Text("call it"))
	if err != nil || len(res.Calls) != 1 || !strings.Contains(res.Calls[0].Error, "there is no tool named") {
		t.Errorf("err %v, calls %+v", err, res.Calls)
	}
}
