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
// stateless input request); the handler's params are not written to. A
// question whose middleware adds nothing goes as it was asked.
func TestSendingMiddlewareAddsMeta(t *testing.T) {
	for _, tt := range []struct {
		version string
		added   protocol.Meta
		want    string // the _meta the client sees
	}{
		{protocol.Version20251125, protocol.Meta{"trace": "middleware", "span": "1"}, "map[own:kept span:1 trace:middleware]"},
		{protocol.Version20260728, protocol.Meta{"trace": "middleware", "span": "1"}, "map[own:kept span:1 trace:middleware]"},
		{protocol.Version20251125, nil, "map[own:kept trace:handler]"},
		{protocol.Version20260728, nil, "map[own:kept trace:handler]"},
	} {
		t.Run(fmt.Sprintf("%s/%d", tt.version, len(tt.added)), func(t *testing.T) {
			addMeta := func(next intercept.Handler) intercept.Handler {
				return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
					req.Meta = tt.added
					return next(ctx, req)
				}
			}
			s := server.New(protocol.Implementation{Name: "meta", Version: "1"}, &server.Options{Sending: []intercept.Middleware{addMeta}})
			handlerMeta := protocol.Meta{"trace": "handler", "own": "kept"}
			server.AddTool(s, &protocol.Tool{Name: "ask"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				res, err := req.Elicit(ctx, &protocol.ElicitParams{Meta: handlerMeta, Message: "sure?", RequestedSchema: []byte(`{"type":"object","properties":{}}`)})
				if err != nil {
					return "", err
				}
				return res.Action, nil
			})
			var seen string
			c := connectPipe(t, s, &client.Options{ProtocolVersion: tt.version,
				Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					seen = fmt.Sprint(p.Meta)
					return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
				}})
			if _, err := c.Call(t.Context(), "ask", nil); err != nil {
				t.Fatal(err)
			}
			if seen != tt.want {
				t.Errorf("the client saw _meta %s, want %s", seen, tt.want)
			}
			if got := fmt.Sprint(handlerMeta); got != "map[own:kept trace:handler]" {
				t.Errorf("the handler's _meta was written to: %s", got)
			}
		})
	}
}
