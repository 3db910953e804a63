package server_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// seenRequest is a server with an echo tool whose receiving middleware
// hands each *server.Request to see.
func seenRequest(see func(*server.Request)) *server.Server {
	record := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			see(server.RequestOf(req))
			return next(ctx, req)
		}
	}
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{record}})
	s.AddTool(&protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(string(args))}}, nil
	})
	return s
}

// TestToolCall: Request.ToolCall gives middleware and a gateway a
// tools/call's params as the server decodes them to run the tool: the
// name however it is spelled, the arguments raw, a retry's members and a
// task, and the error of params that do not decode.
func TestToolCall(t *testing.T) {
	tests := []struct {
		name, method, params string
		want                 protocol.CallToolParams
		wantErr              string
	}{
		{"plain", "tools/call", `"name":"echo","arguments":{"a":1},`,
			protocol.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"a":1}`)}, ""},
		{"spelled otherwise", "tools/call", `"n\u0061me" : "\u0065cho", "arguments":{"a":1},`,
			protocol.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{"a":1}`)}, ""},
		{"no arguments", "tools/call", `"name":"echo",`, protocol.CallToolParams{Name: "echo"}, ""},
		{"retried", "tools/call", `"name":"echo","arguments":{},"requestState":"st","inputResponses":{"k":{"x":1}},`,
			protocol.CallToolParams{Name: "echo", Arguments: jsontext.Value(`{}`), MRTRParams: protocol.MRTRParams{
				RequestState: "st", InputResponses: map[string]jsontext.Value{"k": jsontext.Value(`{"x":1}`)}}}, ""},
		{"a name that is no string", "tools/call", `"name":7,`, protocol.CallToolParams{}, `"/name"`},
		{"another method", "tools/list", ``, protocol.CallToolParams{}, "not a tools/call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got protocol.CallToolParams
			var err error
			s := seenRequest(func(r *server.Request) { got, err = r.ToolCall() })
			defer s.Close()
			handle(s, context.Background(), statelessTaskMessage(t, tt.method, tt.params), nil, nopPeer{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ToolCall: %v, want an error with %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tt.want.Name || string(got.Arguments) != string(tt.want.Arguments) || got.RequestState != tt.want.RequestState ||
				!maps.EqualFunc(got.InputResponses, tt.want.InputResponses, func(a, b jsontext.Value) bool { return string(a) == string(b) }) {
				t.Errorf("ToolCall = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestRemoteAddr: a request names the address of the client whose HTTP
// request carried it, and nothing for a message that came on a stream.
func TestRemoteAddr(t *testing.T) {
	var got string
	s := seenRequest(func(r *server.Request) { got = r.RemoteAddr() })
	defer s.Close()
	origin := &serverapi.Origin{Context: context.Background(), RemoteAddr: "192.0.2.1:4000"}
	handle(s, origin, statelessTaskMessage(t, "tools/call", `"name":"echo",`), nil, nopPeer{})
	if got != "192.0.2.1:4000" {
		t.Errorf("over HTTP: RemoteAddr = %q", got)
	}
	handle(s, context.Background(), statelessTaskMessage(t, "tools/call", `"name":"echo",`), nil, nopPeer{})
	if got != "" {
		t.Errorf("on a stream: RemoteAddr = %q", got)
	}
}
