package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// hookLog records what the four middleware hooks of a server and its
// client see of the requests of interest, each under its hook's name.
type hookLog struct {
	mu   sync.Mutex
	seen map[string][]string
}

// record is middleware that logs, under hook, each tools/call and
// elicitation/create it sees and what came back.
func (l *hookLog) record(hook string) intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			res, err := next(ctx, req)
			if req.Method != protocol.MethodToolsCall && req.Method != protocol.MethodElicit {
				return res, err
			}
			line := fmt.Sprintf("%s %q stateless=%v v=%s: %s", req.Method, req.Name(), req.Stateless, req.ProtocolVersion, outcome(res, err))
			l.mu.Lock()
			l.seen[hook] = append(l.seen[hook], line)
			l.mu.Unlock()
			return res, err
		}
	}
}

// outcome says what a handler returned: the error, the action of an
// elicitation's answer, or whether a tool's result is a tool error.
func outcome(res intercept.Result, err error) string {
	switch {
	case errors.Is(err, server.ErrInputRequired):
		return "input required"
	case err != nil:
		return "error " + err.Error()
	}
	raw, _ := json.Marshal(res.Value)
	var answer struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(raw, &answer) == nil && answer.Action != "" {
		return answer.Action
	}
	return fmt.Sprintf("isError=%v", res.IsError)
}

// TestMiddlewareHooks: each of the four hooks sees what it should, in
// both eras: the client's Sending and the server's Receiving a tools/call
// (each round of a stateless one), with the tool's name and whether its
// result is a tool error; the server's Sending and the client's Receiving
// the elicitation the tool asks (to a stateless client, the server's
// Sending sees it put, input required, then answered on the retry).
func TestMiddlewareHooks(t *testing.T) {
	tests := []struct {
		version string
		want    map[string][]string
	}{
		{protocol.Version20260728, map[string][]string{
			"client sending": {
				`tools/call "confirm" stateless=true v=2026-07-28: isError=false`,
				`tools/call "confirm" stateless=true v=2026-07-28: isError=false`,
				`tools/call "fail" stateless=true v=2026-07-28: isError=true`},
			"server receiving": {
				`tools/call "confirm" stateless=true v=2026-07-28: isError=false`,
				`tools/call "confirm" stateless=true v=2026-07-28: isError=false`,
				`tools/call "fail" stateless=true v=2026-07-28: isError=true`},
			"server sending": {
				`elicitation/create "" stateless=true v=2026-07-28: input required`,
				`elicitation/create "" stateless=true v=2026-07-28: accept`},
			"client receiving": {
				`elicitation/create "" stateless=true v=2026-07-28: accept`},
		}},
		{protocol.Version20251125, map[string][]string{
			"client sending": {
				`tools/call "confirm" stateless=false v=2025-11-25: isError=false`,
				`tools/call "fail" stateless=false v=2025-11-25: isError=true`},
			"server receiving": {
				`tools/call "confirm" stateless=false v=2025-11-25: isError=false`,
				`tools/call "fail" stateless=false v=2025-11-25: isError=true`},
			"server sending": {
				`elicitation/create "" stateless=false v=2025-11-25: accept`},
			"client receiving": {
				`elicitation/create "" stateless=false v=2025-11-25: accept`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			l := &hookLog{seen: map[string][]string{}}
			s := server.New(protocol.Implementation{Name: "hooks", Version: "1"}, &server.Options{
				Receiving: []intercept.Middleware{l.record("server receiving")},
				Sending:   []intercept.Middleware{l.record("server sending")},
			})
			server.AddTool(s, &protocol.Tool{Name: "confirm"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "sure?", RequestedSchema: []byte(`{"type":"object","properties":{}}`)})
				if err != nil {
					return "", err
				}
				return res.Action, nil
			})
			s.AddTool(&protocol.Tool{Name: "fail", InputSchema: []byte(`{"type":"object"}`)}, func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{IsError: true, Content: []protocol.Content{protocol.TextContent("no")}}, nil
			})
			c := connectPipe(t, s, &client.Options{ProtocolVersion: tt.version,
				Sending:   []intercept.Middleware{l.record("client sending")},
				Receiving: []intercept.Middleware{l.record("client receiving")},
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
				}})
			for _, tool := range []string{"confirm", "fail"} {
				if _, err := c.Call(t.Context(), tool, nil); err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
			}
			l.mu.Lock()
			defer l.mu.Unlock()
			for hook, want := range tt.want {
				if got := strings.Join(l.seen[hook], "\n"); got != strings.Join(want, "\n") {
					t.Errorf("%s saw\n%s\nwant\n%s", hook, got, strings.Join(want, "\n"))
				}
			}
		})
	}
}
