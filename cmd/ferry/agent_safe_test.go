package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentOutputIsSafe: what ferry run and ferry chat show at a terminal
// (a model's words, which may repeat a hostile tool result; tool names,
// arguments and results in the call lines; a server's names and
// descriptions in /tools, /servers) reaches it inert, and the same text
// to a pipe or in --format json stays exact (issue 24, item 10; at
// bb1dd6a the escapes reached the terminal raw).
func TestAgentOutputIsSafe(t *testing.T) {
	f, base := startFixture(t)
	t.Setenv("FERRY_STATE_DIR", t.TempDir())
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	servers := fmt.Sprintf(`{"mcpServers":{"ex":{"command":%q},"bad":{"command":%q,"env":{"FERRY_TEST_SERVER":"hostile"}}}}`, exampleServer, testBin)
	if err := os.WriteFile(cfg, []byte(servers), 0o600); err != nil {
		t.Fatal(err)
	}
	echo, _ := json.Marshal(map[string]string{"message": "hi " + hostile})
	callEcho := "call ex__echo " + string(echo)
	common := []string{"--config", cfg, "--model", "openai/fixture", "--base-url", base, "--approval", "auto"}
	// The name the model knows the hostile tool by (made of safe
	// characters by the host) is in the tools the fixture was given.
	if code, _, errOut := runFerry(t, "", append([]string{"run"}, append(common, "-p", "hello")...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	callHostile := ""
	for _, tool := range f.requests[0]["tools"].([]any) {
		name := tool.(map[string]any)["function"].(map[string]any)["name"].(string)
		if strings.HasPrefix(name, "bad") {
			callHostile = "call " + name + " {}"
		}
	}
	if callHostile == "" {
		t.Fatalf("the model was not given the hostile tool: %v", f.requests[0]["tools"])
	}

	tests := []struct {
		name     string
		tty      bool // stdout and stderr are terminals
		stdin    string
		args     []string
		exact    string // to a pipe: stdout holds this as it is
		exactOut string // to a pipe: stdout is exactly this
	}{
		{name: "run: the model's words", tty: true, args: []string{"run", "-p", "say " + hostile}},
		{name: "run: a tool result repeated", tty: true, args: []string{"run", "-p", callEcho}},
		{name: "run: a hostile server's tool", tty: true, args: []string{"run", "-p", callHostile}},
		{name: "chat at a terminal", tty: true,
			stdin: strings.Join([]string{"say " + hostile, callEcho, callHostile, "/tools", "/servers", "/prompts"}, "\n") + "\n",
			args:  []string{"chat"}},
		{name: "run to a pipe", args: []string{"run", "-p", callEcho}, exactOut: "done: hi " + hostile + "\n"},
		{name: "chat to a pipe", stdin: "say " + hostile + "\n" + callHostile + "\n", args: []string{"chat"},
			exact: "you said: say " + hostile + " (1 messages)\n"},
		{name: "run --format json", tty: true, args: []string{"run", "--format", "json", "-p", callHostile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			e := &env{stdin: strings.NewReader(tt.stdin), stdout: &out, stderr: &errOut, stdoutTTY: tt.tty, stderrTTY: tt.tty,
				width: func() int { return 300 }}
			args := append(append([]string{tt.args[0]}, common...), tt.args[1:]...)
			code := run(context.Background(), e, args)
			if code != 0 {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out.String(), errOut.String())
			}
			switch {
			case strings.Contains(tt.name, "json"):
				var res struct {
					Answer    string
					ToolCalls []struct{ Tool, Result string }
				}
				if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.ToolCalls) != 1 ||
					res.ToolCalls[0].Tool != "hostile"+hostile || res.ToolCalls[0].Result != "result "+hostile || res.Answer != "done: result "+hostile {
					t.Errorf("JSON is not exact (%v): %q", err, out.String())
				}
			case tt.exactOut != "":
				if out.String() != tt.exactOut {
					t.Errorf("stdout %q, want %q", out.String(), tt.exactOut)
				}
			case tt.exact != "":
				if !strings.Contains(out.String(), tt.exact) {
					t.Errorf("stdout lacks %q:\n%q", tt.exact, out.String())
				}
			default:
				if dangerous(out.String()) || dangerous(errOut.String()) {
					t.Errorf("escapes reach the terminal:\nstdout %q\nstderr %q", out.String(), errOut.String())
				}
				if !strings.Contains(out.String(), "^[]0;pwned^G") {
					t.Errorf("the text is not shown:\nstdout %q\nstderr %q", out.String(), errOut.String())
				}
			}
		})
	}
}

// TestScreenStreamsSafely: streamed text cut anywhere (inside a
// character, between CR and LF, inside an escape sequence) is shown as
// the whole would be.
func TestScreenStreamsSafely(t *testing.T) {
	text := "é ✓ ok\r\nnext" + hostile + "line\r\n"
	for cut := 0; cut <= len(text); cut++ {
		var w bytes.Buffer
		s := &screen{w: &w, tty: true}
		s.text(text[:cut])
		s.text(text[cut:])
		s.line("end")
		if want := safe(strings.ReplaceAll(text, "\r\n", "\n")) + "end\n"; w.String() != want {
			t.Errorf("cut at %d: %q, want %q", cut, w.String(), want)
		}
	}
	var w bytes.Buffer
	s := &screen{w: &w}
	s.text(text[:3])
	s.text(text[3:])
	if w.String() != text {
		t.Errorf("to a pipe: %q", w.String())
	}
}
