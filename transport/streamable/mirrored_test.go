package streamable_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/internal/leakcheck"
)

// TestMirroredHeadersMatchTheBody: the Mcp-Method, Mcp-Name and
// Mcp-Param-* headers a request carries must say what its body says, in
// a legacy session as in the stateless revision (400 and HeaderMismatch,
// -32020): a proxy or middleware that reads them is never told one tool
// while the server runs another. A legacy request without them is served
// as before.
func TestMirroredHeadersMatchTheBody(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := newHTTPServer(t, nil)
	sid := legacySession(t, ts.URL, `{}`)
	echo := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	region := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"region","arguments":{"region":"eu"}}}`
	statelessEcho := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + statelessMeta + `,"name":"echo","arguments":{"message":"hi"}}}`
	legacy := [][2]string{{"Mcp-Session-Id", sid}, {"MCP-Protocol-Version", "2025-11-25"}}
	stateless := [][2]string{{"MCP-Protocol-Version", "2026-07-28"}}
	with := func(base [][2]string, more ...string) [][2]string {
		h := append([][2]string(nil), base...)
		for i := 0; i+1 < len(more); i += 2 {
			h = append(h, [2]string{more[i], more[i+1]})
		}
		return h
	}
	tests := []struct {
		name    string
		body    string
		headers [][2]string
		status  int
		want    string
	}{
		{"legacy without headers", echo, legacy, 200, `"text":"hi"`},
		{"legacy with matching headers", echo, with(legacy, "Mcp-Method", "tools/call", "Mcp-Name", "echo"), 200, `"text":"hi"`},
		{"legacy with Mcp-Name in base64", echo, with(legacy, "Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?="), 200, `"text":"hi"`},
		{"legacy, Mcp-Method ping", echo, with(legacy, "Mcp-Method", "ping"), 400, `"code":-32020`},
		{"legacy, Mcp-Name of another tool", echo, with(legacy, "Mcp-Method", "tools/call", "Mcp-Name", "other"), 400, `"code":-32020`},
		{"legacy, Mcp-Name alone, of another tool", echo, with(legacy, "Mcp-Name", "=?base64?b3RoZXI=?="), 400, `"code":-32020`},
		{"legacy, two Mcp-Method headers", echo, with(legacy, "Mcp-Method", "tools/call", "Mcp-Method", "ping"), 400, `"code":-32020`},
		{"legacy, Mcp-Param of another value", region, with(legacy, "Mcp-Param-Region", "us"), 400, `"code":-32020`},
		{"legacy, Mcp-Param left out", region, legacy, 200, `"text":"eu"`},
		{"legacy initialize, Mcp-Method ping", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			[][2]string{{"Mcp-Method", "ping"}}, 400, `"code":-32020`},
		{"stateless, two Mcp-Name headers", statelessEcho, with(stateless, "Mcp-Method", "tools/call", "Mcp-Name", "echo", "Mcp-Name", "other"), 400, `"code":-32020`},
		{"stateless, matching", statelessEcho, with(stateless, "Mcp-Method", "tools/call", "Mcp-Name", "echo"), 200, `"text":"hi"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for _, kv := range tt.headers {
				req.Header.Add(kv[0], kv[1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("%d %s, want %d and %s", resp.StatusCode, body, tt.status, tt.want)
			}
		})
	}
}
