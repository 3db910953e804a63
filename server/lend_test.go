package server_test

import (
	"context"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestLendToolArguments checks which messages the server says it only
// borrowed: the tool calls of a server that lends tool arguments, whatever
// their outcome, and nothing else.
func TestLendToolArguments(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	tests := []struct {
		name string
		lend bool
		body string
		want bool
	}{
		{"call", true, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`, true},
		{"invalid arguments", true, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":3},` + meta + `}}`, true},
		{"failing tool", true, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{},` + meta + `}}`, true},
		{"list", true, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, false},
		{"prompt", true, `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p",` + meta + `}}`, false},
		{"call, default", false, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"},` + meta + `}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := server.New(protocol.Implementation{Name: "lend", Version: "1"}, &server.Options{LendToolArguments: tt.lend})
			server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
				Message string `json:"message"`
			}) (string, error) {
				return in.Message, nil
			})
			server.AddTool(s, &protocol.Tool{Name: "fail"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
				return "", context.Canceled
			})
			s.AddPrompt(&protocol.Prompt{Name: "p"}, func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
				return &protocol.GetPromptResult{}, nil
			})
			m, err := jsonrpc.Decode([]byte(tt.body), jsonrpc.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := handle(s, context.Background(), m, nil, nopPeer{}); err != nil {
				t.Fatal(err)
			}
			if m.Lent != tt.want {
				t.Errorf("Lent = %v, want %v", m.Lent, tt.want)
			}
		})
	}
}
