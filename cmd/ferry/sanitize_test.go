package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/protocol"
)

func TestSafe(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text, ünïcode ✓\n\ttab", "plain text, ünïcode ✓\n\ttab"},
		{"\x1b]0;title\x07", "^[]0;title^G"},
		{"a\x1b[2Jb\rc\x7f", "a^[[2Jb^Mc^?"},
		{"\u009b31m", `\u009b31m`},
		{"abc\u202edef", `abc\u202edef`},
		{"bad \xff utf-8", "bad \uFFFD utf-8"},
	}
	for _, tt := range tests {
		if got := safe(tt.in); got != tt.want {
			t.Errorf("safe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := safeLine("a\nb"); got != "a^Jb" {
		t.Errorf("safeLine: %q", got)
	}
}

// dangerous reports the bytes that would act on a terminal.
func dangerous(s string) bool {
	s = strings.ReplaceAll(s, "\r\x1b[K", "") // ferry's own: the progress line redrawn
	return strings.ContainsAny(s, "\x1b\x07\u009b\u202e\r")
}

// TestTerminalInjection: a hostile server's tool names, descriptions,
// argument names, results, errors, log and progress messages and stderr
// reach the terminal inert, and JSON output keeps them exact (issue 24,
// item 10; at a12c33f they reached the terminal raw).
func TestTerminalInjection(t *testing.T) {
	atTerminal := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, stdoutTTY: true, stderrTTY: true, width: func() int { return 300 }}
		code := run(context.Background(), e, args)
		return code, out.String(), errOut.String()
	}
	runs := [][]string{
		{"-v", "tools"},
		{"-v", "--log-level", "debug", "call", "hostile" + hostile},
		{"call", "hostile" + hostile, "--args", `{"y":1}`},     // isError: the text goes to stderr
		{"call", "hostile" + hostile, "x" + hostile + "=nope"}, // not one of the enum
		{"servers"},
	}
	for _, args := range runs {
		code, out, errOut := atTerminal(append(args, "--env", "FERRY_TEST_SERVER=hostile", "--", testBin)...)
		if code != 0 && code != exitTool && code != exitUsage {
			t.Errorf("%q: exit %d\n%s", args, code, errOut)
		}
		if dangerous(out) || dangerous(errOut) {
			t.Errorf("%q: exit %d; escapes reach the terminal:\nstdout %q\nstderr %q", args, code, out, errOut)
		}
		if !strings.Contains(out+errOut, "^[]0;pwned^G") {
			t.Errorf("%q: exit %d; the text is not shown:\nstdout %q\nstderr %q", args, code, out, errOut)
		}
	}
	// JSON stays exact.
	code, out, errOut := runFerry(t, "", "--format", "json", "call", "hostile"+hostile, "--env", "FERRY_TEST_SERVER=hostile", "--", testBin)
	var res struct{ Content []struct{ Text string } }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Content) != 1 || res.Content[0].Text != "result "+hostile {
		t.Errorf("JSON: exit %d %q %q", code, out, errOut)
	}
	// Text to a pipe stays exact too: it is data, not shown.
	code, out, _ = runFerry(t, "", "--format", "table", "call", "hostile"+hostile, "--env", "FERRY_TEST_SERVER=hostile", "--", testBin)
	if code != 0 || out != "result "+hostile+"\n" {
		t.Errorf("table to a pipe: exit %d %q", code, out)
	}
}

// serveHostile is an MCP server on stdio, written by hand because the
// server package refuses such names, that puts hostile in every string
// it controls: its name, a tool's name, description and argument names,
// results, errors, log and progress messages, and its stderr. A call
// with the argument "rpc" is answered with a JSON-RPC error.
func serveHostile() {
	os.Stderr.WriteString("starting " + hostile + "\n")
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	send := func(v map[string]any) { v["jsonrpc"] = "2.0"; out.Encode(v) }
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string         `json:"protocolVersion"`
				Arguments       map[string]any `json:"arguments"`
				Meta            struct {
					ProgressToken any `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil {
			continue
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": m.Params.ProtocolVersion,
				"capabilities": map[string]any{"tools": map[string]any{}, "logging": map[string]any{}},
				"serverInfo":   map[string]any{"name": "hostile" + hostile, "version": "1" + hostile}}
		case "tools/list":
			result = map[string]any{"tools": []any{map[string]any{"name": "hostile" + hostile, "description": "Says " + hostile,
				"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"x" + hostile: map[string]any{"type": "string", "enum": []string{"v" + hostile}}}}}}}
		case "tools/call":
			send(map[string]any{"method": "notifications/message", "params": map[string]any{"level": "warning", "logger": "log" + hostile, "data": "message " + hostile}})
			if tok := m.Params.Meta.ProgressToken; tok != nil {
				send(map[string]any{"method": "notifications/progress", "params": map[string]any{"progressToken": tok, "progress": 1, "total": 2, "message": "progress " + hostile}})
			}
			if _, ok := m.Params.Arguments["rpc"]; ok { // a protocol error
				send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32602, "message": "refused " + hostile}})
				continue
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "result " + hostile}}, "isError": len(m.Params.Arguments) > 0}
		case "logging/setLevel", "ping":
		default:
			send(map[string]any{"id": m.ID, "error": map[string]any{"code": -32601, "message": "no method " + hostile}})
			continue
		}
		send(map[string]any{"id": m.ID, "result": result})
	}
}

// TestApprovalQuestionIsSafe: the questions of ferry run and chat show a
// server's or a model's names and texts inert (issue 24, item 10).
func TestApprovalQuestionIsSafe(t *testing.T) {
	var w bytes.Buffer
	no := func(context.Context) (string, error) { return "n", nil }
	askApproval(context.Background(), &w, no, "m", &agent.Question{Server: "s" + hostile, Tool: "t" + hostile, Arguments: []byte(`{"a":"\u001b[2J"}`)})
	askApproval(context.Background(), &w, no, "m", &agent.Question{Server: "s" + hostile, Sampling: &protocol.CreateMessageParams{
		SystemPrompt: "sys" + hostile, Messages: []protocol.SamplingMessage{{Role: "user", Content: []protocol.Content{{Type: protocol.ContentText, Text: "hi" + hostile}}}}}})
	if dangerous(w.String()) || !strings.Contains(w.String(), "hi^[]0;pwned") {
		t.Errorf("%q", w.String())
	}
}
