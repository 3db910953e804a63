package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestSendingMiddlewareAddsMeta: what a server's Sending middleware puts
// in intercept.Request.Meta reaches the client in the _meta of the
// question, over the handler's own member of the same name, beside its
// other members, in both eras (a legacy server-to-client request, a
// stateless input request), but not over the protocol's (the related
// task of a question a 2025-11-25 task asks); the handler's params are
// not written to. A question whose middleware adds nothing goes as it
// was asked.
func TestSendingMiddlewareAddsMeta(t *testing.T) {
	added := protocol.Meta{"trace": "middleware", "span": "1", protocol.MetaRelatedTask: "forged"}
	for _, tt := range []struct {
		version string
		added   protocol.Meta
		asTask  bool
		want    string // the _meta the client sees, without the related task
	}{
		{protocol.Version20251125, added, false, "map[io.modelcontextprotocol/related-task:forged own:kept span:1 trace:middleware]"},
		{protocol.Version20260728, added, false, "map[io.modelcontextprotocol/related-task:forged own:kept span:1 trace:middleware]"},
		{protocol.Version20251125, added, true, "map[own:kept span:1 trace:middleware]"},
		{protocol.Version20251125, nil, false, "map[own:kept trace:handler]"},
		{protocol.Version20260728, nil, false, "map[own:kept trace:handler]"},
	} {
		t.Run(fmt.Sprintf("%s/%d/task=%v", tt.version, len(tt.added), tt.asTask), func(t *testing.T) {
			addMeta := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
					req.Meta = tt.added
					return next(ctx, req)
				}
			}
			s := server.New(protocol.Implementation{Name: "meta", Version: "1"}, &server.Options{Sending: []intercept.Middleware{addMeta}})
			handlerMeta := protocol.Meta{"trace": "handler", "own": "kept"}
			tool := &protocol.Tool{Name: "ask", Execution: &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}}
			server.AddTool(s, tool, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				res, err := req.Elicit(ctx, &protocol.ElicitParams{Meta: handlerMeta, Message: "sure?", RequestedSchema: []byte(`{"type":"object","properties":{}}`)})
				if err != nil {
					return "", err
				}
				return res.Action, nil
			})
			var seen protocol.Meta
			c := connectPipe(t, s, &client.Options{ProtocolVersion: tt.version,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					seen = p.Meta
					return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
				}})
			var opts []client.CallOption
			if tt.asTask {
				opts = append(opts, client.AsTask(nil))
			}
			if _, err := c.Call(t.Context(), "ask", nil, opts...); err != nil {
				t.Fatal(err)
			}
			if tt.asTask {
				related, _ := seen[protocol.MetaRelatedTask].(map[string]any)
				if id, _ := related["taskId"].(string); id == "" {
					t.Errorf("the question of a task came with related task %v", seen[protocol.MetaRelatedTask])
				}
				delete(seen, protocol.MetaRelatedTask)
			}
			if got := fmt.Sprint(seen); got != tt.want {
				t.Errorf("the client saw _meta %s, want %s", got, tt.want)
			}
			if got := fmt.Sprint(handlerMeta); got != "map[own:kept trace:handler]" {
				t.Errorf("the handler's _meta was written to: %s", got)
			}
		})
	}
}
