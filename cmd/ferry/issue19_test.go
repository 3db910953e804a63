package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runBin runs the ferry binary and returns its exit code and output.
func runBin(t *testing.T, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	cmd := exec.Command(ferryBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String(), time.Since(t0)
}

// TestMaxTimeoutIsNotRaised: --max-timeout 1s bounds a 5 s call even
// though --timeout (60 s by default) is longer (issue 19, item 3).
func TestMaxTimeoutIsNotRaised(t *testing.T) {
	code, out, errOut, took := runBin(t, "--max-timeout", "1s", "--format", "json", "call", "countdown", "steps=6", "delayMs=1000", "--", exampleServer)
	if code != exitUnreachable || !strings.Contains(errOut, "1s") || took > 4*time.Second {
		t.Errorf("exit %d after %v, want 4 after about 1 s; stdout %q stderr %q", code, took.Round(time.Millisecond), out, errOut)
	}
}

// TestFailurePrintsNoResult: a server that cannot be reached leaves
// stdout empty, in JSON and in a table (issue 19, item 5).
func TestFailurePrintsNoResult(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	for _, format := range []string{"json", "table"} {
		code, out, errOut, _ := runBin(t, "--format", format, "tools", url)
		if code != exitUnreachable || out != "" {
			t.Errorf("%s: exit %d, stdout %q (want 4 and nothing); stderr %q", format, code, out, errOut)
		}
	}
	code, out, _, _ := runBin(t, "--format", "table", "tools", "--", "/no/such/binary")
	if code != exitUnreachable || out != "" {
		t.Errorf("missing binary: exit %d, stdout %q", code, out)
	}
}

// TestArgumentsCheckedBeforeSending: a missing required argument or a
// value outside an enum is refused with exit 1 and a message naming the
// argument, before anything is sent (issue 19, item 7; at a12c33f the
// server's refusal came back as exit 5).
func TestArgumentsCheckedBeforeSending(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"call", "add", "a=1"}, "missing required argument b"},
		{[]string{"call", "echo"}, "missing required argument message"},
		{[]string{"call", "weather", "city=Paris", "unit=kelvin"}, `argument unit: "kelvin" is not one of "celsius", "fahrenheit"`},
	}
	for _, tt := range tests {
		code, out, errOut, _ := runBin(t, append(append([]string{"--format", "table"}, tt.args...), "--", exampleServer)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "it takes:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
	if code, out, errOut, _ := runBin(t, "--format", "table", "call", "weather", "city=Paris", "unit=fahrenheit", "--", exampleServer); code != 0 {
		t.Errorf("a valid call: exit %d %q %q", code, out, errOut)
	}
}

// TestReadByTemplate: among servers that all have resources, ferry read
// URI picks the one whose listed template matches the URI (issue 19,
// item 4; at a12c33f: "no server lists it; say which to ask with
// --server").
func TestReadByTemplate(t *testing.T) {
	ev := serverEverything(t)
	servers := map[string]any{"mcpServers": map[string]any{
		"example":    map[string]any{"command": exampleServer},
		"everything": map[string]any{"command": ev[0], "args": ev[1:]},
	}}
	b, _ := json.Marshal(servers)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(cfg, b, 0o644)
	code, out, errOut, _ := runBin(t, "--config", cfg, "--format", "json", "read", "demo://resource/dynamic/text/3")
	if code != 0 || !strings.Contains(out, `"uri": "demo://resource/dynamic/text/3"`) {
		t.Errorf("server-everything's template: exit %d %s %s", code, out, errOut)
	}
	code, out, errOut, _ = runBin(t, "--config", cfg, "--format", "table", "read", "ferry://greeting/Ann")
	if code != 0 || !strings.Contains(out, "Ann") {
		t.Errorf("the example's template: exit %d %s %s", code, out, errOut)
	}
	code, _, errOut, _ = runBin(t, "--config", cfg, "read", "nothing://here")
	if code != exitUsage || !strings.Contains(errOut, "--server") {
		t.Errorf("no match: exit %d %s", code, errOut)
	}
}

// TestToolDetail: "ferry tools SERVER TOOL" shows one tool in full: each
// argument's type, bounds, choices, default and whole description, and
// the input schema (issue 19, item 6; at a12c33f: "tools takes at most
// one argument").
func TestToolDetail(t *testing.T) {
	code, out, errOut, _ := runBin(t, "--format", "table", "tools", "everything", "countdown", "--", exampleServer)
	for _, want := range []string{"everything__countdown", "Counts down, reporting progress at each step", "steps*",
		"integer, 1 to 100, default 5: Number of steps", "Input schema:", `"maximum": 10000`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("table: exit %d, lacks %q:\n%s%s", code, want, out, errOut)
		}
	}
	code, out, errOut, _ = runBin(t, "--format", "json", "tools", "everything.weather", "--", exampleServer)
	var tool struct {
		Server      string
		Name        string
		InputSchema struct{ Required []string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &tool) != nil || tool.Name != "weather" || len(tool.InputSchema.Required) != 1 {
		t.Errorf("json: exit %d %s %s", code, out, errOut)
	}
}

// TestOneSentenceErrors: a connect timeout, a refused connection and an
// HTTP 404 with an HTML page each read as one sentence at a terminal,
// naming the server by its host and port; -v and --format json keep the
// detail (issue 19, items 8 and 10; at a12c33f: "context deadline
// exceeded", "jsonrpc error -32603", the whole page, "127-0-0-1").
func TestOneSentenceErrors(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Error</title></head><body><pre>Cannot POST /nope</pre></body></html>")
	}))
	defer page.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	tests := []struct {
		args       []string
		want, full string
	}{
		{[]string{"--connect-timeout", "1s", "tools", "--", "sleep", "100"},
			`server "sleep" did not start and answer within 1s; raise --connect-timeout`, "context deadline exceeded"},
		{[]string{"tools", refused},
			`server "127.0.0.1-` + port + `" refused the connection: nothing listens at 127.0.0.1:` + port, "connection refused"},
		{[]string{"tools", page.URL + "/nope"},
			"answered HTTP 404 Not Found to POST " + page.URL + "/nope; is the URL the server's MCP endpoint?", "Cannot POST /nope"},
	}
	for _, tt := range tests {
		code, _, errOut, _ := runBin(t, append([]string{"--format", "table"}, tt.args...)...)
		if code != exitUnreachable || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tt.want) ||
			strings.Contains(errOut, tt.full) || strings.Contains(errOut, "jsonrpc") {
			t.Errorf("%q: exit %d, stderr %q; want one line with %q", tt.args, code, errOut, tt.want)
		}
		_, _, errOut, _ = runBin(t, append([]string{"--format", "table", "-v"}, tt.args...)...)
		if !strings.Contains(errOut, tt.full) {
			t.Errorf("%q -v: stderr lacks %q:\n%s", tt.args, tt.full, errOut)
		}
		_, _, errOut, _ = runBin(t, append([]string{"--format", "json"}, tt.args...)...)
		if !strings.Contains(errOut, tt.full) {
			t.Errorf("%q --format json: stderr lacks %q:\n%s", tt.args, tt.full, errOut)
		}
	}
}

// TestTraceFileStdout: --trace-file - writes the NDJSON trace on stdout,
// line by line before the result, and no file named "-" (issue 19, item
// 10).
func TestTraceFileStdout(t *testing.T) {
	defer os.Remove("-")
	code, out, errOut, _ := runBin(t, "--trace-file", "-", "--format", "json", "call", "add", "a=1", "b=2", "--", exampleServer)
	lines := strings.Split(out, "\n")
	var first struct{ Dir, Kind, Method string }
	if code != 0 || json.Unmarshal([]byte(lines[0]), &first) != nil || first.Dir != "send" || !strings.Contains(out, `"method":"tools/call"`) ||
		!strings.HasSuffix(strings.TrimSpace(out), "}") || !strings.Contains(out, `"sum": 3`) {
		t.Errorf("exit %d, stdout:\n%s\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
}

// TestCommandHelp: "ferry NAME --help" and "ferry help NAME" print that
// command's own page: its usage line, its summary, an example, and the
// flags it declares, not the global page (issue 19, item 6; at a12c33f
// every subcommand's --help printed the same global page).
func TestCommandHelp(t *testing.T) {
	_, global, _, _ := runBin(t, "--help")
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			words := strings.Fields(c.name)
			for _, args := range [][]string{append(words, "--help"), append([]string{"help"}, words...)} {
				code, out, errOut, _ := runBin(t, args...)
				if code != 0 || out == global {
					t.Fatalf("%q: exit %d, the global page %v; stderr %q", args, code, out == global, errOut)
				}
				summary := strings.ToUpper(c.summary[:1]) + c.summary[1:]
				want := []string{"Usage: ferry " + c.name, summary, "Example:\n", "ferry " + c.name}
				fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
				if c.setup != nil {
					c.setup(fs, &cli{})
				}
				fs.VisitAll(func(f *flag.Flag) {
					if len(f.Name) == 1 {
						want = append(want, "-"+f.Name)
					} else {
						want = append(want, "--"+f.Name)
					}
				})
				for _, w := range want {
					if !strings.Contains(out, w) {
						t.Errorf("%q: no %q in\n%s", args, w, out)
					}
				}
			}
		})
	}
}
