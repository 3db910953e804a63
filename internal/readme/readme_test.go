package readme

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// codeComment names the program a README block comes from.
var codeComment = regexp.MustCompile(`^<!-- code: (internal/readme/[a-z0-9]+/main\.go) -->$`)

// block is one ```go block of the README and the program it names.
type block struct {
	line    int    // of the opening fence, 1-based
	program string // relative to the repository's root
	code    string
}

// readmeBlocks returns the Go blocks of README.md; a block without its
// code comment is an error, so that none escapes the check.
func readmeBlocks(t *testing.T) []block {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var blocks []block
	var prev string
	var cur *block
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur != nil && line == "```":
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
		case line == "```go":
			m := codeComment.FindStringSubmatch(prev)
			if m == nil {
				t.Fatalf("README.md:%d: a Go block without <!-- code: internal/readme/NAME/main.go --> on the line before", n)
			}
			cur = &block{line: n, program: m[1]}
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if cur != nil {
		t.Fatalf("README.md:%d: the Go block is not closed", cur.line)
	}
	return blocks
}

// marked returns the lines of program between its readme markers, one
// tab less indented.
func marked(t *testing.T, program string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("../..", program))
	if err != nil {
		t.Fatal(err)
	}
	src := string(data)
	_, rest, ok := strings.Cut(src, "\t// readme:begin\n")
	code, _, ok2 := strings.Cut(rest, "\t// readme:end\n")
	if !ok || !ok2 {
		t.Fatalf("%s: no // readme:begin and // readme:end markers in main", program)
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(code, "\n") {
		b.WriteString(strings.TrimPrefix(line, "\t"))
	}
	return b.String()
}

// TestREADMEBlocks: every Go block of the README is the marked part of
// its program, and every program here is shown.
func TestREADMEBlocks(t *testing.T) {
	blocks := readmeBlocks(t)
	shown := map[string]bool{}
	for _, b := range blocks {
		shown[b.program] = true
		if want := marked(t, b.program); b.code != want {
			t.Errorf("README.md:%d differs from %s; the program's marked part is:\n%s", b.line, b.program, want)
		}
	}
	programs, err := filepath.Glob("*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range programs {
		if p = "internal/readme/" + filepath.ToSlash(p); !shown[p] {
			t.Errorf("%s is not shown in README.md", p)
		}
	}
	if len(programs) == 0 || len(blocks) == 0 {
		t.Fatalf("%d programs, %d README blocks: the check checks nothing", len(programs), len(blocks))
	}
}

// build compiles the program in dir into a temporary folder.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), dir)
	out, err := exec.Command("go", "build", "-o", bin, "./"+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./%s: %v\n%s", dir, err, out)
	}
	return bin
}

// TestClientBuilds: the client's program compiles. It is not run: it
// launches server-everything with npx, which the interop tests cover.
func TestClientBuilds(t *testing.T) {
	build(t, "client")
}

// TestGreeter: the README's server serves its tool over stdio, to
// clients of both eras, and exits when its stdin closes.
func TestGreeter(t *testing.T) {
	bin := build(t, "greeter")
	for _, version := range []string{"", protocol.Version20251125, protocol.Version20241105} {
		ctx := context.Background()
		c, err := client.Connect(ctx, &stdio.Command{Path: bin}, &client.Options{ProtocolVersion: version})
		if err != nil {
			t.Fatalf("%q: %v", version, err)
		}
		res, err := c.Call(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil || res.IsError || res.Content[0].Text != "Hello, Ada!" {
			t.Errorf("%q: greet = %+v, %v", version, res, err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("%q: close: %v", version, err)
		}
	}
}

// TestSkills: the README's skills example serves its embedded skill and
// reads it back, verified.
func TestSkills(t *testing.T) {
	out, err := exec.Command(build(t, "skills")).CombinedOutput()
	want := "release-notes: Write release notes from a list of merged changes\nOne line a change, in the past tense.\n"
	if err != nil || string(out) != want {
		t.Errorf("skills: %v\n%s\nwant %q", err, out, want)
	}
}
