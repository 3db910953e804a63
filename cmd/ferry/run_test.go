package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRunForScripts: ferry run as a script runs it, the binary with its
// stdin, stdout and stderr not terminals (issue 36, item 1). At b211c63
// ask refused every call silently and exited 0, --approval deny ran the
// allowed tool, a limit left stdout empty with --format json, "run needs
// a prompt" was JSON where "no model" was a line, and there was no
// --format ndjson.
func TestRunForScripts(t *testing.T) {
	_, base := startFixture(t)
	t.Setenv("FERRY_MODEL", "")
	cfg := agentConfig(t, "")
	allowed := agentConfig(t, `,"agent":{"allow":["ex__echo"]}`)
	model := []string{"--model", "openai/fixture", "--base-url", base}
	echo := []string{"-p", `call ex__echo {"message":"hi"}`}
	args := func(parts ...[]string) []string {
		out := []string{"run"}
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	note := "ferry: ex__echo needs approval and there is no terminal to ask"
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string // what stdout holds, in order ("" alone: nothing)
		stderr []string // what stderr holds, in order
	}{
		{"ask without a terminal", args([]string{"--config", cfg}, model, echo), exitNotApproved,
			[]string{"done: Error: not run: tool calls need the user's approval"}, []string{note, "ferry: the answer lacks what was refused for want of approval (no terminal to ask): ex__echo; rerun with --approval auto"}},
		{"ask without a terminal, json", args([]string{"--config", cfg, "--format", "json"}, model, echo), exitNotApproved,
			[]string{`"answer": "done: Error: not run: tool calls need the user's approval`, `"unasked": true`, `"code": 7`, `"kind": "not_approved"`},
			[]string{note, `{"error":{"code":7,"kind":"not_approved"`}},
		{"allowed", args([]string{"--config", allowed}, model, echo), exitOK, []string{"done: hi\n"}, nil},
		{"deny runs no tool", args([]string{"--config", allowed, "--approval", "deny"}, model, echo), exitOK,
			[]string{"done: Error: not run: tool calls are denied (approval mode deny)\n"}, nil},
		{"a limit, json", args([]string{"--config", cfg, "--format", "json", "--approval", "auto", "--max-steps", "1"}, model, echo), exitError,
			[]string{`"name": "ex__echo"`, `"result": "hi"`, `"inputTokens": 11`, `"steps": 1`, `"limit": "steps"`, `"code": 2`},
			[]string{`{"error":{"code":2,"kind":"error","message":"the turn stopped after 1 model requests (the step limit)"}}`}},
		{"no model, json", args([]string{"--config", cfg, "--format", "json"}, echo), exitUsage,
			[]string{`"toolCalls": []`, `"message": "no model: give --model`, `"code": 1`, `"kind": "usage"`},
			[]string{`{"error":{"code":1,"kind":"usage","message":"no model`}},
		{"no model, text", args([]string{"--config", cfg}, echo), exitUsage, []string{""}, []string{"ferry: no model: give --model"}},
		{"no prompt, text", args([]string{"--config", cfg}, model), exitUsage, []string{""}, []string{"ferry: run needs a prompt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut, _ := runBin(t, tc.args...)
			if code != tc.code || !inOrder(out, tc.stdout) || !inOrder(errOut, tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout %s\nstderr %s", code, tc.code, out, errOut)
			}
			if strings.Contains(strings.Join(tc.args, " "), "--format json") && !json.Valid([]byte(out)) {
				t.Errorf("stdout is not one JSON document: %s", out)
			}
		})
	}
}

// inOrder says whether s holds each of want in order; [""] means s is
// empty.
func inOrder(s string, want []string) bool {
	if len(want) == 1 && want[0] == "" {
		return s == ""
	}
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

// TestRunNDJSON: --format ndjson streams the agent's events as they
// happen, one JSON object a line (agent.Event), the last the result;
// an error, before the turn or stopping it, is an event before it
// (issue 36, item 1).
func TestRunNDJSON(t *testing.T) {
	_, base := startFixture(t)
	t.Setenv("FERRY_MODEL", "")
	cfg := agentConfig(t, "")
	model := []string{"--model", "openai/fixture", "--base-url", base, "--approval", "auto"}
	cases := []struct {
		name  string
		args  []string
		code  int
		kinds string
		last  string // in the result line
	}{
		{"a call", append(model, "-p", `call ex__echo {"message":"hi"}`), exitOK,
			"step tool_asked tool_approved tool_started tool_finished text step usage result", `"answer":"done: hi"`},
		{"sampling", append(model, "-p", `call ex__summarize {"text":"a long text"}`), exitOK,
			"step tool_asked tool_approved tool_started sampling tool_finished text step usage result", `"sampling":[{"server":"ex","requests":1,"refused":0`},
		{"elicitation", append(model, "-p", `call ex__ask_name {}`), exitOK,
			"step tool_asked tool_approved tool_started elicitation tool_finished text step usage result", `The user did not answer (decline).`},
		{"a limit", append(model, "--max-steps", "1", "-p", `call ex__echo {"message":"hi"}`), exitError,
			"step tool_asked tool_approved tool_started tool_finished usage error result", `"limit":"steps","code":2,"kind":"error"`},
		{"no model", []string{"-p", "hi"}, exitUsage, "error result", `"code":1,"kind":"usage"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut, _ := runBin(t, append([]string{"run", "--config", cfg, "--format", "ndjson"}, tc.args...)...)
			var kinds []string
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			for _, line := range lines {
				var e struct{ Kind string }
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("not a line of JSON (%v): %q\nstderr %s", err, line, errOut)
				}
				kinds = append(kinds, e.Kind)
			}
			if code != tc.code || strings.Join(kinds, " ") != tc.kinds || !strings.Contains(lines[len(lines)-1], tc.last) {
				t.Errorf("exit %d (want %d), events %v\nstdout %s\nstderr %s", code, tc.code, kinds, out, errOut)
			}
		})
	}
}

// TestRunBoundsSampling: a server's sampling request is a model request
// of the turn, its maxTokens capped by the configuration's
// maxSamplingTokens, and what it took is in the result (issue 31).
func TestRunBoundsSampling(t *testing.T) {
	f, base := startFixture(t)
	cfg := agentConfig(t, `,"agent":{"maxSamplingTokens":50}`)
	code, out, errOut, _ := runBin(t, "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base, "--approval", "auto",
		"--format", "json", "-p", `call ex__summarize {"text":"a long text"}`)
	var res struct {
		Steps    int
		Sampling []struct {
			Server   string
			Requests int
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != exitOK || res.Steps != 3 || len(res.Sampling) != 1 || res.Sampling[0].Requests != 1 {
		t.Fatalf("exit %d (%v)\nstdout %s\nstderr %s", code, err, out, errOut)
	}
	f.mu.Lock()
	sampling := f.requests[1]
	f.mu.Unlock()
	if sampling["max_tokens"] != 50.0 {
		t.Errorf("the sampling request (the server asked for 200) went out with max_tokens %v", sampling["max_tokens"])
	}
	// With one step left after the turn's first request, the server's
	// request is refused and the turn stops at the limit.
	code, out, _, _ = runBin(t, "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base, "--approval", "auto",
		"--format", "json", "--max-steps", "1", "-p", `call ex__summarize {"text":"a long text"}`)
	if code != exitError || !inOrder(out, []string{`"result": "Error: `, `the host's limit of 1 model requests a turn is reached`,
		`"refused": 1`, `"limit": "steps"`}) {
		t.Errorf("exit %d\nstdout %s", code, out)
	}
}
