package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestProtocolErrorExitCode: a tools/call the server answers with a
// JSON-RPC error is a protocol error, exit code 6, kind protocol_error,
// told apart from the tool's own error (isError, exit code 5) (issue 31;
// at b211c63 both were tool_error, exit 5).
func TestProtocolErrorExitCode(t *testing.T) {
	tests := []struct {
		name     string
		format   string
		args     string
		code     int
		kind     string // of the JSON error line
		rpcCode  int64
		inStderr string // of the text output
	}{
		{"JSON-RPC error, json", "json", `{"rpc":1}`, 6, "protocol_error", -32602, ""},
		{"JSON-RPC error, text", "table", `{"rpc":1}`, 6, "", 0, `answered tools/call hostile^[]0;pwned`},
		{"isError, json", "json", `{"y":1}`, 5, "tool_error", 0, ""},
		{"isError, text", "table", `{"y":1}`, 5, "", 0, "reported an error: result ^[]0;pwned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, stderrTTY: true}
			code := run(context.Background(), e, []string{"--format", tt.format, "call", "hostile" + hostile, "--args", tt.args,
				"--env", "FERRY_TEST_SERVER=hostile", "--", testBin})
			if code != tt.code || dangerous(errOut.String()) {
				t.Fatalf("exit %d, want %d\n%q", code, tt.code, errOut.String())
			}
			if tt.kind == "" {
				if !strings.Contains(errOut.String(), tt.inStderr) {
					t.Errorf("stderr lacks %q:\n%q", tt.inStderr, errOut.String())
				}
				return
			}
			var line errorLine
			_, last, _ := strings.Cut(errOut.String(), "\r\x1b[K{") // after the progress line
			if json.Unmarshal([]byte("{"+last), &line) != nil || line.Error.Code != tt.code || line.Error.Kind != tt.kind || line.Error.RPCCode != tt.rpcCode {
				t.Errorf("error line %q", errOut.String())
			}
		})
	}
}

// TestExitCodesDocumented: every exit code is in the help, with its
// kind's meaning.
func TestExitCodesDocumented(t *testing.T) {
	for code := range codeKinds {
		if !strings.Contains(exitText, " "+strconv.Itoa(code)+" ") {
			t.Errorf("exit code %d (%s) is not in the help:\n%s", code, codeKinds[code], exitText)
		}
	}
}
