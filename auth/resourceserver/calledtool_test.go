package resourceserver

import (
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// calledTool reads a tools/call's name as the server does, through
// package jsonrpc's public API alone.
func TestCalledTool(t *testing.T) {
	for _, tc := range []struct{ name, msg, want string }{
		{"name first", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"name":"u"}}}`, "t"},
		{"name last", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{"name":"u"},"name":"t"}}`, "t"},
		{"escaped member name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"n\u0061me":"t"}}`, "t"},
		{"other case", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"t"}}`, ""},
		{"not a string", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, ""},
		{"no params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, ""},
		{"other method", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"t"}}`, ""},
	} {
		m, err := jsonrpc.Decode([]byte(tc.msg), jsonrpc.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := calledTool(m); got != tc.want {
			t.Errorf("%s: calledTool = %q, want %q", tc.name, got, tc.want)
		}
	}
}
