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
