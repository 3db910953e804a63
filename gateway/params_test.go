package gateway

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// TestToolCallParams: the gateway reads a tools/call's name and
// arguments as the decoder picked them out, in both eras, and refuses
// what it refused when it walked the params itself.
func TestToolCallParams(t *testing.T) {
	_, url := start(t, []*config.Server{child(t, "a")}, &Options{Prefix: "never"})
	cases := []struct {
		params  string
		want    string // the answer, when the call succeeds (whoami's: its start, "a ")
		wantErr string // else in the error's message
		legacy  bool   // only for a legacy client: a stateless one's HTTP request is refused first (no Mcp-Name header)
	}{
		{`{"name":"echo","arguments":{"message":"hi"}}`, "hi", "", false},
		{`{"arguments":{"message":"first"},"name":"echo"}`, "first", "", false},
		{`{"n\u0061me":"echo","arguments":{"message":"escaped"}}`, "escaped", "", false},
		{`{"name":"\u0065cho","arguments":{"message":"escaped value"}}`, "escaped value", "", false},
		{`{"name":"echo","arguments":{"message":"extra"},"x-extra":[1,{"name":"no"}]}`, "extra", "", false},
		{`{"name":"whoami","arguments":null}`, "a ", "", false},
		{`{"name":"whoami"}`, "a ", "", false},
		{`{"arguments":{"message":"hi"}}`, "", "needs a string name", true},
		{`{"name":7,"arguments":{}}`, "", `string within "/name"`, true},
		{`{"name":"echo","arguments":[1]}`, "", "arguments must be an object", false},
		{`{"name":"echo","arguments":"x"}`, "", "arguments must be an object", false},
		{`{"name":"nope","arguments":{}}`, "", `unknown tool "nope"`, false},
	}
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, url+"/mcp", era.version, nil)
			for _, tc := range cases {
				if tc.legacy && era.name != "legacy" {
					continue
				}
				var res protocol.CallToolResult
				err := c.CallMethod(ctx, protocol.MethodToolsCall, jsontext.Value(tc.params), &res)
				if tc.wantErr != "" {
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, tc.wantErr) {
						t.Errorf("%s: %v, want invalid params: %s", tc.params, err, tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", tc.params, err)
					continue
				}
				if res.IsError || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, tc.want) ||
					(tc.want != "a " && res.Content[0].Text != tc.want) {
					t.Errorf("%s: %+v, want %q", tc.params, res, tc.want)
				}
			}
		})
	}
}
