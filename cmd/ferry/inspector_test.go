package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What the Inspector CLI has that ferry lacked at a12c33f (issue 19):
// any method by name, pages, binary content saved, completions.

// TestRPC: ferry rpc METHOD PARAMS sends any request and prints its
// result; a JSON-RPC error keeps its code.
func TestRPC(t *testing.T) {
	code, out, errOut, _ := runBin(t, "rpc", "completion/complete",
		`{"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language", "value": "g"}}`, "--", exampleServer)
	var res struct{ Completion struct{ Values []string } }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Completion.Values) == 0 || res.Completion.Values[0] != "go" {
		t.Errorf("completion/complete: exit %d %s %s", code, out, errOut)
	}
	code, out, errOut, _ = runBin(t, "--format", "json", "rpc", "everything", "no/such", "{}", "--", exampleServer)
	var line errorLine
	if code != exitProtocol || out != "" || json.Unmarshal([]byte(errOut), &line) != nil || line.Error.RPCCode != -32601 || line.Error.Kind != "protocol_error" {
		t.Errorf("no/such: exit %d %q %s", code, out, errOut)
	}
	if code, _, errOut, _ = runBin(t, "rpc", "tools/list", "[1]", "--", exampleServer); code != exitUsage {
		t.Errorf("params not an object: exit %d %s", code, errOut)
	}
}

// TestCursor: --cursor ” gives the first page as the server sends it,
// with its nextCursor, and --cursor NEXT the next one.
func TestCursor(t *testing.T) {
	var seen []string
	cursor := ""
	for range 5 {
		code, out, errOut, _ := runBin(t, "tools", "--cursor", cursor, "--env", "FERRY_TEST_SERVER=stdio", "--", testBin)
		var page struct {
			Tools      []struct{ Name string }
			NextCursor string
		}
		if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Tools) != 1 {
			t.Fatalf("--cursor %q: exit %d %s %s", cursor, code, out, errOut)
		}
		seen = append(seen, page.Tools[0].Name)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	code, out, _, _ := runBin(t, "tools", "--env", "FERRY_TEST_SERVER=stdio", "--", testBin)
	var all struct{ Tools []struct{ Name string } }
	json.Unmarshal([]byte(out), &all)
	if len(seen) < 2 || code != 0 || len(all.Tools) != len(seen) {
		t.Errorf("pages %v, all %s", seen, out)
	}
}

// TestOutputDir: --output-dir saves an image and a blob as files, under
// names the server cannot point elsewhere, and shows their paths.
func TestOutputDir(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut, _ := runBin(t, "--format", "table", "call", "picture", "--output-dir", dir, "--env", "FERRY_TEST_SERVER=stdio", "--", testBin)
	if code != 0 || !strings.Contains(out, "saved to "+filepath.Join(dir, "image.png")) || !strings.Contains(out, "saved to "+filepath.Join(dir, "evil.bin")) {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	png, _ := os.ReadFile(filepath.Join(dir, "image.png"))
	blob, _ := os.ReadFile(filepath.Join(dir, "evil.bin"))
	if string(png) != "\x89PNG\r\n\x1a\n" || string(blob) != "\x00\x01\x02" {
		t.Errorf("files %q %q", png, blob)
	}
	// Again: new names, nothing overwritten; JSON stays as sent.
	code, out, errOut, _ = runBin(t, "--format", "json", "call", "picture", "--output-dir", dir, "--env", "FERRY_TEST_SERVER=stdio", "--", testBin)
	if code != 0 || !strings.Contains(out, `"data": "iVBORw0KGgo="`) || !strings.Contains(errOut, filepath.Join(dir, "image-2.png")) {
		t.Errorf("json: exit %d %s %s", code, out, errOut)
	}
}

// TestCompletion: the bash script completes commands, groups and each
// command's flags, skipping flag values; zsh loads the same function;
// fish lists every command and flag (from the command table).
func TestCompletion(t *testing.T) {
	code, script, _, _ := runBin(t, "completion", "bash")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	file := filepath.Join(t.TempDir(), "ferry.bash")
	os.WriteFile(file, []byte(script), 0o644)
	cases := map[string]string{
		"ferry ca":                     "call",
		"ferry --config x.json ca":     "call",
		"ferry call --ta":              "--task",
		"ferry tools --cur":            "--cursor",
		"ferry auth s":                 "status",
		"ferry completion f":           "fish",
		"ferry --format json r":        "resources read rpc run",
		"ferry --trust-folder tools -": "",
	}
	for line, want := range cases {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " -") {
			words = append(words[:len(words)-1], "-")
		}
		argv := append([]string{"-c", `source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _ferry; echo "${COMPREPLY[*]}"`, file}, words...)
		cmd := exec.Command("bash", argv...)
		out, err := cmd.CombinedOutput()
		got := strings.TrimSpace(string(out))
		if err != nil || want != "" && got != want || want == "" && !strings.Contains(got, "--cursor") {
			t.Errorf("%q: %q %v, want %q", line, got, err, want)
		}
	}
	_, zsh, _, _ := runBin(t, "completion", "zsh")
	_, fish, _, _ := runBin(t, "completion", "fish")
	if !strings.HasPrefix(zsh, "#compdef ferry\n") || !strings.Contains(zsh, "complete -o default -F _ferry ferry") {
		t.Errorf("zsh:\n%s", zsh)
	}
	for _, c := range commands {
		if !regexp.MustCompile(`\b`+c.words()[0]+`\b`).MatchString(script) || !strings.Contains(fish, "-a "+c.words()[len(c.words())-1]+" ") {
			t.Errorf("%s is missing from the bash or fish completions", c.name)
		}
	}
	if !strings.Contains(fish, "-n '__fish_seen_subcommand_from call' -l output-dir -r -F") {
		t.Errorf("fish lacks call's --output-dir:\n%s", fish)
	}
}
