package server_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/writelog"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// Middleware that refuses a tool by req.Name refuses it however the
// client spells the name: a search of the raw params for
// `"name":"delete"` let `"name": "delete"` through.
func TestNameAsServed(t *testing.T) {
	tests := []struct {
		desc, params string
		want         string // the name middleware sees
	}{
		{"plain", `{"name":"delete","arguments":{}}`, "delete"},
		{"spaced", `{"name": "delete", "arguments": {}}`, "delete"},
		{"escaped", `{"name":"d\u0065lete"}`, "delete"},
		{"escaped member", `{"n\u0061me":"delete"}`, "delete"},
		{"after arguments", `{"arguments":{"name":"x"},"name":"delete"}`, "delete"},
		{"other tool", `{"name":"list","arguments":{"name":"delete"}}`, "list"},
		{"invalid", `{"name":7}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var seen string
				ran := false
				refuse := func(next intercept.Handler) intercept.Handler {
					return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
						if req.Method == protocol.MethodToolsCall {
							seen = req.Name()
							if seen == "delete" {
								return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "delete is not allowed")
							}
						}
						return next(ctx, req)
					}
				}
				s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{refuse}})
				for _, name := range []string{"delete", "list"} {
					server.AddTool(s, &protocol.Tool{Name: name}, func(context.Context, *server.Request, struct{}) (string, error) {
						ran = ran || name == "delete"
						return name, nil
					})
				}
				in, feed := net.Pipe()
				out := &writelog.Log{}
				done := make(chan error)
				go func() { done <- s.Run(context.Background(), stdio.NewServerStream(in, out, jsonrpc.Limits{})) }()
				send := func(line string) string {
					if _, err := feed.Write([]byte(line + "\n")); err != nil {
						t.Fatal(err)
					}
					synctest.Wait()
					return strings.Join(out.Take(), "")
				}
				send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
				send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				answer := send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":` + tt.params + `}`)
				if seen != tt.want {
					t.Errorf("req.Name() = %q, want %q", seen, tt.want)
				}
				if ran {
					t.Errorf("the refused tool ran; answer %s", answer)
				}
				feed.Close()
				<-done
			})
		})
	}
}
