package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/protocol"
)

// runAtTerminal runs the command in-process as if stdin were a
// terminal (stderr is piped: questions are asked all the same).
func runAtTerminal(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, stdinTTY: true}
	code = run(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

// TestElicitationFollowsTheSchema: server-everything's form of every
// field kind, answered at a terminal whose stderr is piped: arrays go as
// arrays, titled choices are chosen by title or number, enumNames are
// shown, bounds and formats are checked and asked again, defaults fill
// what is left empty, and the answer sent is shown (issue 19, items 1
// and 10; at a12c33f the multi-select went as the string "Piano, Drums",
// the titles were refused, 500 and "not-an-email" were sent, and with
// stderr piped the question was declined).
func TestElicitationFollowsTheSchema(t *testing.T) {
	answers := []string{
		"y",            // answer
		"Ada Lovelace", // name
		"y",            // check
		"",             // firstLine: default
		"not-an-email", "ada@example.com",
		"example", "https://ada.example",
		"yesterday", "1815-12-10",
		"500", "7", // integer 1..100
		"", // number: default 3.14
		"Bob", "joey",
		"Piano, Drums",
		"Wonder Woman",
		"[]", "1,3", // at least 1
		"Dogs",
	}
	args := append([]string{"--format", "json", "call", "trigger-elicitation-request", "--"}, serverEverything(t)...)
	code, out, errOut := runAtTerminal(t, strings.Join(answers, "\n")+"\n", args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var res protocol.CallToolResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	raw := res.Content[len(res.Content)-1].Text
	var got struct {
		Action  string
		Content map[string]any
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(strings.TrimSpace(raw), "Raw result: ")), &got); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	sent, _ := json.Marshal(got.Content)
	want := `{"birthdate":"1815-12-10","check":true,"email":"ada@example.com","firstLine":"It was a dark and stormy night.",` +
		`"homepage":"https://ada.example","integer":7,"legacyTitledEnum":"pet-2","name":"Ada Lovelace","number":3.14,` +
		`"titledMultipleSelectEnum":["fish-1","fish-3"],"titledSingleSelectEnum":"hero-3",` +
		`"untitledMultipleSelectEnum":["Piano","Drums"],"untitledSingleSelectEnum":"Joey"}`
	if got.Action != "accept" || string(sent) != want {
		t.Errorf("the server got %s %s\nwant %s\n%s", got.Action, sent, want, errOut)
	}
	for _, s := range []string{"1) Superman (hero-1)", "2) Dogs (pet-2)", "<integer, 1 to 100>", "[Guitar]", "[Tuna]",
		"a number 1 to 100, please", "an email address", "a date as YYYY-MM-DD", "choose 1 to 3 of them", `Sent to "server-everything": {"birthdate"`} {
		if !strings.Contains(errOut, s) {
			t.Errorf("the terminal lacks %q:\n%s", s, errOut)
		}
	}
}

func TestAskForm(t *testing.T) {
	p := &protocol.ElicitParams{Message: "Who?", RequestedSchema: []byte(`{"type":"object","properties":{
		"name":{"type":"string","description":"Your name","minLength":2},"age":{"type":"integer"},"color":{"type":"string","enum":["red","blue"]},
		"ok":{"type":"boolean","default":true},"when":{"type":"string","format":"date-time"},
		"tags":{"type":"array","items":{"type":"string"}}},"required":["name"]}`)}
	var w bytes.Buffer
	res, err := askForm(&w, bufio.NewReader(strings.NewReader("\n\nA\nAnn\nold\n42\n2\n\nnow\n2026-11-25T10:00:00Z\n[\"x\",\"y\"]\n")), "s", p)
	if err != nil || res.Action != protocol.ElicitAccept {
		t.Fatalf("%v %+v", err, res)
	}
	b, _ := json.Marshal(res.Content)
	if string(b) != `{"age":42,"color":"blue","name":"Ann","ok":true,"tags":["x","y"],"when":"2026-11-25T10:00:00Z"}` {
		t.Errorf("content %s\n%s", b, w.String())
	}
	for in, want := range map[string]string{"n\n": protocol.ElicitDecline, "c\n": protocol.ElicitCancel, "": protocol.ElicitCancel} {
		w.Reset()
		res, _ := askForm(&w, bufio.NewReader(strings.NewReader(in)), "s", p)
		if res.Action != want {
			t.Errorf("%q: %s, want %s", in, res.Action, want)
		}
		if in == "" && !strings.HasSuffix(w.String(), "\nCancelled.\n") {
			t.Errorf("Ctrl-D: %q, want a new line before the rest", w.String())
		}
	}
}

// TestOfferLoginAsksAtTheTerminal: the offer to log in to a server that
// refused a command is a question like an elicitation: with stdin a
// terminal and stderr piped (2>&1 | tee log) it is asked on the terminal
// itself, not lost in the pipe; with stderr a terminal, on stderr.
func TestOfferLoginAsksAtTheTerminal(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the token store
	t.Setenv("HOME", t.TempDir())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// An OAuth challenge: only there is a login offered.
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"locked":{"url":"`+srv.URL+`/mcp"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const question = "Log in to locked now? [Y/n] "
	for _, stderrTTY := range []bool{false, true} {
		var out, errOut, tty bytes.Buffer
		e := &env{stdin: strings.NewReader("n\n"), stdout: &out, stderr: &errOut, stdinTTY: true, stdoutTTY: true, stderrTTY: stderrTTY, tty: &tty}
		if stderrTTY {
			e.tty = nil
		}
		code := run(context.Background(), e, []string{"tools", "--config", cfg})
		asked, logged := tty.String(), errOut.String()
		if stderrTTY {
			asked = errOut.String()
		}
		if code == 0 || !strings.Contains(asked, question) || !strings.Contains(asked, "locked refused the request (401") ||
			!stderrTTY && strings.Contains(logged, question) {
			t.Errorf("stderr a terminal %v: exit %d\nterminal %q\nstderr %q", stderrTTY, code, tty.String(), errOut.String())
		}
	}
}
