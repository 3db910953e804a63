package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUntrustedFolder: the servers of a folder's own .mcp.json start
// only once the folder is trusted (at a terminal, remembered) or with
// --trust-folder; otherwise nothing runs and stderr says how (issue 24,
// item 11; at a12c33f "ferry tools" ran them at once).
func TestUntrustedFolder(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	cfg := `{"mcpServers": {"project": {"command": "sh", "args": ["-c", "echo ran >> ` + mark + `; exec ` + testBin + `"],
		"env": {"FERRY_TEST_SERVER": "stdio"}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ferry := func(args ...string) (int, string) {
		cmd := exec.Command(ferryBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "APPDATA="+home)
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		cmd.Run()
		return cmd.ProcessState.ExitCode(), errOut.String()
	}
	ran := func() int { b, _ := os.ReadFile(mark); return strings.Count(string(b), "ran") }

	code, errOut := ferry("--format", "json", "tools")
	if ran() != 0 || code != exitUsage || !strings.Contains(errOut, "--trust-folder") {
		t.Fatalf("untrusted: ran %d times, exit %d, stderr %s", ran(), code, errOut)
	}
	code, errOut = ferry("--format", "json", "--trust-folder", "tools")
	if ran() != 1 || code != 0 {
		t.Fatalf("--trust-folder: ran %d times, exit %d, stderr %s", ran(), code, errOut)
	}
	code, _ = ferry("--format", "json", "tools")
	if ran() != 1 || code != exitUsage {
		t.Fatalf("--trust-folder is for one run: ran %d times, exit %d", ran(), code)
	}

	// At a terminal: asked once, remembered.
	t.Chdir(dir)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	code, _, errOut = runAtTerminal(t, "n\n", "--format", "json", "tools")
	if ran() != 1 || code != exitUsage || !strings.Contains(errOut, "project: sh") {
		t.Fatalf("answered no: ran %d times, exit %d, stderr %s", ran(), code, errOut)
	}
	code, _, errOut = runAtTerminal(t, "y\n", "--format", "json", "tools")
	if ran() != 2 || code != 0 {
		t.Fatalf("answered yes: ran %d times, exit %d, stderr %s", ran(), code, errOut)
	}
	code, errOut = ferry("--format", "json", "tools")
	if ran() != 3 || code != 0 || strings.Contains(errOut, "trust") {
		t.Fatalf("trusted folder: ran %d times, exit %d, stderr %s", ran(), code, errOut)
	}
}

// TestTrustBoundToContent: the trust of a folder holds for the
// configuration it was given with; a server added to .mcp.json later
// does not start until the user is asked again, shown its whole command
// line, with variables as written rather than their values (issue 36,
// item 2; at b211c63 the added server ran at once, and the question
// showed "added: sh" without its arguments).
func TestTrustBoundToContent(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("H25_SECRET", "s3cret-value")
	entry := func(name string) string {
		return `"` + name + `": {"command": "sh", "args": ["-c", "echo ran >> ` + filepath.Join(dir, name) + `; exec ` + testBin + `", "${H25_SECRET}"],
			"env": {"FERRY_TEST_SERVER": "stdio"}}`
	}
	write := func(entries ...string) {
		cfg := `{"mcpServers": {` + strings.Join(entries, ",") + `}}`
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ran := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.Count(string(b), "ran")
	}

	write(entry("first"))
	if code, _, errOut := runAtTerminal(t, "y\n", "--format", "json", "tools"); code != 0 || ran("first") != 1 {
		t.Fatalf("answered yes: exit %d, ran %d, stderr %s", code, ran("first"), errOut)
	}
	if code, _, errOut := runAtTerminal(t, "", "--format", "json", "tools"); code != 0 || ran("first") != 2 || strings.Contains(errOut, "trust") {
		t.Fatalf("trusted, unchanged: exit %d, ran %d, stderr %s", code, ran("first"), errOut)
	}

	write(entry("first"), entry("added"))
	code, _, errOut := runAtTerminal(t, "n\n", "--format", "json", "tools")
	wantLine := "added: sh -c 'echo ran >> " + filepath.Join(dir, "added") + "; exec " + testBin + "' '${H25_SECRET}' (environment: FERRY_TEST_SERVER)"
	if code != exitUsage || ran("added") != 0 || ran("first") != 2 || !strings.Contains(errOut, wantLine) || strings.Contains(errOut, "s3cret") {
		t.Fatalf("a server added after the trust, answered no: exit %d, ran %d+%d, stderr:\n%s\nwant the line %q, no secret",
			code, ran("first"), ran("added"), errOut, wantLine)
	}
	if code, _, errOut := runAtTerminal(t, "y\n", "--format", "json", "tools"); code != 0 || ran("added") != 1 {
		t.Fatalf("answered yes again: exit %d, ran %d, stderr %s", code, ran("added"), errOut)
	}
	if code, _, errOut := runAtTerminal(t, "", "--format", "json", "tools"); code != 0 || ran("added") != 2 {
		t.Fatalf("trusted with the new content: exit %d, ran %d, stderr %s", code, ran("added"), errOut)
	}
}
