package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// TestJSONAtTerminalIsInert: --format json at a terminal writes a
// server's C1 CSI (U+009B) and bidi overrides as \u escapes, on stdout
// and in the error line on stderr, and the JSON still reads as the
// server's exact text (issue 31; at b211c63 they were written raw).
func TestJSONAtTerminalIsInert(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout func(string) bool // the JSON read back is exact
	}{
		{"tools", []string{"tools"}, exitOK, func(out string) bool {
			var v struct {
				Tools []struct{ Name, Description string }
			}
			return json.Unmarshal([]byte(out), &v) == nil && len(v.Tools) == 1 && v.Tools[0].Description == "Says "+hostile
		}},
		{"call", []string{"call", "hostile" + hostile}, exitOK, func(out string) bool {
			var v struct{ Content []struct{ Text string } }
			return json.Unmarshal([]byte(out), &v) == nil && len(v.Content) == 1 && v.Content[0].Text == "result "+hostile
		}},
		{"tool error", []string{"call", "hostile" + hostile, "--args", `{"y":1}`}, exitTool, func(out string) bool {
			var v struct{ IsError bool }
			return json.Unmarshal([]byte(out), &v) == nil && v.IsError
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, stdoutTTY: true, stderrTTY: true, width: func() int { return 300 }}
			args := append([]string{"--format", "json"}, tt.args...)
			code := run(context.Background(), e, append(args, "--env", "FERRY_TEST_SERVER=hostile", "--", testBin))
			if code != tt.code || dangerous(out.String()) || dangerous(errOut.String()) || !tt.stdout(out.String()) {
				t.Errorf("exit %d\nstdout %q\nstderr %q", code, out.String(), errOut.String())
			}
			if tt.code == exitOK {
				return
			}
			var line errorLine
			_, last, _ := strings.Cut(errOut.String(), "\r\x1b[K{") // after the progress line
			if json.Unmarshal([]byte("{"+last), &line) != nil || !strings.Contains(line.Error.Message, "result "+hostile) {
				t.Errorf("the error line does not read back: %q", errOut.String())
			}
		})
	}
}

// TestJSONInTextAtTerminalIsInert: the JSON that the text output shows
// (structured content, a content block of a kind ferry does not know)
// is escaped at a terminal too, and exact elsewhere (issue 31; at
// b211c63 it was written raw).
func TestJSONInTextAtTerminalIsInert(t *testing.T) {
	res := &protocol.CallToolResult{
		StructuredContent: []byte(`{"a":"` + "\u009b2J\u202e" + `"}`),
		Content:           []protocol.Content{{Type: "x-future", Name: "n\u009b31m"}},
	}
	for _, tty := range []bool{true, false} {
		var out bytes.Buffer
		o := &cli{env: &env{stdout: &out, stdoutTTY: tty}}
		o.printResult(res)
		if tty == dangerous(out.String()) || !strings.Contains(out.String(), "2J") || !strings.Contains(out.String(), "31m") {
			t.Errorf("at a terminal %v: %q", tty, out.String())
		}
	}
}

// TestErrorLineIsJSON: the JSON error line stays one line of valid JSON
// when a server's stderr is not UTF-8, and inert at a terminal (at
// b211c63 it was cut off where the invalid byte was).
func TestErrorLineIsJSON(t *testing.T) {
	err := &host.Error{Server: "s", Kind: host.KindUnreachable, Err: errors.New("it crashed"), Stderr: "bad \xff byte " + hostile}
	var errOut bytes.Buffer
	o := &cli{env: &env{stderr: &errOut, stderrTTY: true}, json: true}
	code := o.fail(err)
	var line errorLine
	if code != exitUnreachable || json.Unmarshal(errOut.Bytes(), &line) != nil || dangerous(errOut.String()) ||
		line.Error.Stderr != "bad \uFFFD byte "+hostile || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d %q", code, errOut.String())
	}
}
