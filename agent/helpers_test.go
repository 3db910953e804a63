package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// scripted is a Model that answers from a script, recording what it was
// sent. These tests are of the loop; the providers' wire formats are
// tested in agent/openai, agent/anthropic and the wire test module.
type scripted struct {
	mu     sync.Mutex
	reqs   []Request
	script func(n int, req *Request) (*Reply, error)
}

func (s *scripted) Generate(ctx context.Context, req *Request, stream func(Delta)) (*Reply, error) {
	s.mu.Lock()
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	s.reqs = append(s.reqs, cp)
	n := len(s.reqs)
	s.mu.Unlock()
	r, err := s.script(n, &cp)
	if err != nil {
		return nil, err
	}
	if stream != nil {
		if t := r.Message.Text(); t != "" {
			stream(Delta{Text: t})
		}
	}
	return r, nil
}

func (s *scripted) requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func say(text string) *Reply {
	return &Reply{Message: Message{Role: Assistant, Parts: []Part{Text(text)}}, Stop: EndTurn, Usage: Usage{InputTokens: 10, OutputTokens: 5}}
}

func calls(cs ...ToolCall) *Reply {
	r := &Reply{Message: Message{Role: Assistant}, Stop: ToolUse, Usage: Usage{InputTokens: 10, OutputTokens: 5}}
	for i := range cs {
		c := cs[i]
		r.Message.Parts = append(r.Message.Parts, Part{Type: ToolCallPart, Call: &c})
	}
	return r
}

// lastResults returns the tool results of a request's last message.
func lastResults(t *testing.T, req Request) []*ToolResult {
	t.Helper()
	m := req.Messages[len(req.Messages)-1]
	if m.Role != Tool {
		t.Fatalf("the last message is %s, not the tool results", m.Role)
	}
	var out []*ToolResult
	for _, p := range m.Parts {
		out = append(out, p.Result)
	}
	return out
}

// startHost runs in-process servers behind a host, with the client
// options co gives (nil: none).
func startHost(t *testing.T, servers map[string]*server.Server, co func(string) *client.Options) *host.Host {
	t.Helper()
	var cfgs []*config.Server
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range servers {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range names {
		cfgs = append(cfgs, &config.Server{Name: n, Transport: config.Stdio, Command: n})
	}
	var mu sync.Mutex
	var conns []*server.Session
	h, err := host.New(cfgs, &host.Options{
		Client:     co,
		WatchTools: true,
		Transport: func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, b := memory.NewPipe(jsonrpc.Limits{})
			mu.Lock()
			conns = append(conns, servers[s.Name].Connect(context.Background(), a))
			mu.Unlock()
			return b, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
			c.Wait()
		}
	})
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

func newServer(name string) *server.Server {
	return server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
}

type echoIn struct {
	Message string `json:"message"`
}

func addEcho(s *server.Server) {
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes the message"},
		func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
			return "echo: " + in.Message, nil
		})
}

// events collects a turn's events.
type events struct {
	mu  sync.Mutex
	all []Event
}

func (e *events) add(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if ev.Call != nil {
		c := *ev.Call
		ev.Call = &c
	}
	e.all = append(e.all, ev)
}

func (e *events) of(kind EventKind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func mustCheck(t *testing.T, c *Conversation) {
	t.Helper()
	if err := c.check(); err != nil {
		t.Fatalf("the conversation cannot be sent again: %v", err)
	}
}

func describeMessages(msgs []Message) string {
	s := ""
	for _, m := range msgs {
		s += fmt.Sprintf("[%s %d parts] ", m.Role, len(m.Parts))
	}
	return s
}
