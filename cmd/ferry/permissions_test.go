package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// keepPermissions writes the permissions file of the user configuration
// directory config: for the project dir, each "NAME PERMISSION".
func keepPermissions(t *testing.T, config, dir string, perms ...string) {
	t.Helper()
	var b strings.Builder
	for _, p := range perms {
		name, perm, _ := strings.Cut(p, " ")
		b.WriteString(canonicalDir(dir) + "\t" + name + "\t" + perm + "\n")
	}
	path := filepath.Join(config, "ferry", "permissions")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRunApprovalModes: --approval plan runs the read-only tools and
// refuses the rest, telling the model; the permissions kept for a
// project (always, ask, never, of a tool or a whole server) hold for
// ferry run in that folder and nowhere else (issue 36, item 5). At
// b211c63 plan was not a mode and nothing was kept per project.
func TestRunApprovalModes(t *testing.T) {
	_, base := startFixture(t)
	t.Setenv("FERRY_MODEL", "")
	project, elsewhere := t.TempDir(), t.TempDir()
	cfg := agentConfig(t, `,"agent":{"allow":["ex__add"]}`)
	echo, add := `call ex__echo {"message":"hi"}`, `call ex__add {"a":1,"b":2}`
	cases := []struct {
		name     string
		dir      string
		perms    []string
		approval string
		prompt   string
		code     int
		stdout   string
		stderr   string
	}{
		{"plan runs a read-only tool", project, nil, "plan", echo, exitOK, "done: hi\n", ""},
		{"plan refuses the rest, the allow list too", project, nil, "plan", add, exitOK,
			"done: Error: not run: approval mode plan runs only read-only tools (readOnlyHint), and this one may change things", ""},
		{"never kept for the project", project, []string{"ex__add never"}, "auto", add, exitOK,
			"done: Error: not run: the user's permissions for this project say never for ex__add", ""},
		{"never of the server", project, []string{"ex never"}, "auto", echo, exitOK, "say never for ex\n", ""},
		{"the project's permissions stay in it", elsewhere, []string{"ex__add never"}, "auto", add, exitOK, `done: {"sum":3}`, ""},
		{"always runs without a terminal", project, []string{"ex always"}, "", echo, exitOK, "done: hi\n", ""},
		{"ask asks even in mode auto", project, []string{"ex__echo ask"}, "auto", echo, exitNotApproved,
			"say ask for ex__echo, and there is no terminal to ask", "is asked about in every mode: set it to always)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := t.TempDir()
			keepPermissions(t, config, project, tc.perms...)
			args := []string{"run", "--config", cfg, "--model", "openai/fixture", "--base-url", base, "-p", tc.prompt}
			if tc.approval != "" {
				args = append(args, "--approval", tc.approval)
			}
			cmd := exec.Command(ferryBin, args...)
			cmd.Dir = tc.dir
			cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+config)
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("exit %d (want %d)\nstdout %s\nstderr %s", code, tc.code, out.String(), errOut.String())
			}
		})
	}
}
