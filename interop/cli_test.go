package interop

// End-to-end tests of the built ferry command against servers we did not
// write (server-everything, server-filesystem, server-memory, pinned in
// node/package.json), from a configuration file in each supported format
// (testdata/configs).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	ferryOnce sync.Once
	ferryBin  string
	ferryErr  error
)

// ferryBinary builds cmd/ferry once, next to the example server (in the
// directory TestMain removes).
func ferryBinary(t *testing.T) string {
	t.Helper()
	ferryOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		bin := filepath.Join(filepath.Dir(exampleServer), "ferry")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/ferry")
		cmd.Dir = filepath.Join(filepath.Dir(file), "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			ferryErr = fmt.Errorf("go build ./cmd/ferry: %v\n%s", err, out)
			return
		}
		ferryBin = bin
	})
	if ferryErr != nil {
		t.Fatal(ferryErr)
	}
	return ferryBin
}

// e2e is the environment of a test's ferry runs: the variables its
// configuration files use.
type e2e struct {
	t   *testing.T
	env map[string]string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
	requireNode(t)
	ferryBinary(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from the filesystem server\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The filesystem server resolves symlinks: give it the real path.
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return &e2e{t: t, env: map[string]string{
		"FERRY_NODE":   nodeBin,
		"NODE_MODULES": nodeModules,
		"FS_ROOT":      root,
		"MEMORY_FILE":  filepath.Join(t.TempDir(), "memory.jsonl"),
	}}
}

// withHTTP starts server-everything in streamableHttp and sse modes and
// sets EVERYTHING_HTTP_URL and EVERYTHING_SSE_URL.
func (e *e2e) withHTTP() *e2e {
	e.env["EVERYTHING_HTTP_URL"] = startEverythingMode(e.t, "streamableHttp", "listening on port", "/mcp")
	e.env["EVERYTHING_SSE_URL"] = startEverythingSSE(e.t, e.t.Context())
	return e
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs the ferry binary.
func (e *e2e) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, ferryBin, args...)
	cmd.Env = os.Environ()
	for k, v := range e.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 5 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errOut.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	default:
		t.Fatalf("ferry %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRun runs ferry and fails the test unless it exits with code.
func (e *e2e) mustRun(t *testing.T, code int, stdin string, args ...string) result {
	t.Helper()
	r := e.run(t, stdin, args...)
	if r.code != code {
		t.Fatalf("ferry %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

func configPath(name string) string { return filepath.Join("testdata", "configs", name) }

// toolNames returns server -> tool names from `ferry tools --format json`.
func toolNames(t *testing.T, out string) map[string][]string {
	t.Helper()
	var r struct {
		Tools []struct {
			Server, Name, QualifiedName string
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("tools output: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, tl := range r.Tools {
		if tl.QualifiedName != tl.Server+"__"+tl.Name {
			t.Errorf("qualified name %q of %s.%s", tl.QualifiedName, tl.Server, tl.Name)
		}
		m[tl.Server] = append(m[tl.Server], tl.Name)
	}
	return m
}

// Tools each server has (or, with a filter, lacks).
var (
	evTools         = []string{"echo", "get-sum", "get-env", "trigger-long-running-operation"}
	filesystemTools = []string{"read_text_file", "list_directory", "write_file", "list_allowed_directories"}
	memoryTools     = []string{"create_entities", "read_graph", "search_nodes", "delete_entities"}
)

// TestCLIConfigFormats: every supported format starts its servers and
// lists their tools, with the entries' filters applied.
func TestCLIConfigFormats(t *testing.T) {
	e := newE2E(t).withHTTP()
	tests := []struct {
		file    string
		servers map[string][]string // server -> tools it must have
		lacks   map[string][]string // server -> tools filtered out
		skipped []string            // disabled servers
	}{
		{file: "claude_desktop_config.json", servers: map[string][]string{
			"everything": evTools, "filesystem": filesystemTools, "memory": memoryTools}},
		{file: "cursor_mcp.json", servers: map[string][]string{
			"everything": evTools, "memory": memoryTools, "remote": evTools}},
		{file: "claude_code.mcp.json", servers: map[string][]string{
			"filesystem": filesystemTools, "everything-http": evTools, "everything-sse": evTools}},
		{file: "windsurf_mcp_config.json", servers: map[string][]string{
			"memory": {"create_entities", "read_graph"}, "remote": evTools},
			lacks: map[string][]string{"memory": {"delete_entities", "delete_relations"}}, skipped: []string{"postgres"}},
		{file: "mcp-servers.json", servers: map[string][]string{"everything": evTools, "filesystem": filesystemTools}},
		{file: "vscode_mcp.json", servers: map[string][]string{
			"memory": memoryTools, "filesystem": filesystemTools, "remote": evTools}},
		{file: "cline_mcp_settings.json", servers: map[string][]string{
			"filesystem": {"read_text_file", "list_directory", "list_allowed_directories"}, "everything": evTools},
			lacks: map[string][]string{"filesystem": {"write_file", "read_media_file", "move_file"}}},
		{file: "gemini_settings.json", servers: map[string][]string{
			"everything": {"echo", "get-sum"}, "remote": {"echo", "get-sum"}},
			lacks: map[string][]string{"everything": {"get-env"}, "remote": {"get-env"}}},
		{file: "command_forms.json", servers: map[string][]string{
			"memory": memoryTools, "everything": evTools, "events": evTools}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			cfg := configPath(tt.file)
			r := e.mustRun(t, 0, "", "--config", cfg, "--format", "json", "servers")
			var st struct {
				Servers []struct {
					Name, Status, Transport, Era, ProtocolVersion string
					Tools                                         *int
					ConnectMS                                     float64
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatal(err)
			}
			for _, s := range st.Servers {
				want := "ready"
				if slices.Contains(tt.skipped, s.Name) {
					want = "disabled"
				}
				if s.Status != want {
					t.Errorf("server %s: status %s, want %s", s.Name, s.Status, want)
				}
				if want == "ready" && (s.Era == "" || s.ProtocolVersion == "" || s.Tools == nil || *s.Tools == 0 || s.ConnectMS <= 0) {
					t.Errorf("server %s: %+v", s.Name, s)
				}
			}
			if len(st.Servers) != len(tt.servers)+len(tt.skipped) {
				t.Errorf("%d servers, want %d", len(st.Servers), len(tt.servers)+len(tt.skipped))
			}
			got := toolNames(t, e.mustRun(t, 0, "", "--config", cfg, "tools", "--format", "json").stdout)
			for srv, tools := range tt.servers {
				for _, tool := range tools {
					if !slices.Contains(got[srv], tool) {
						t.Errorf("%s lacks tool %s (has %v)", srv, tool, got[srv])
					}
				}
			}
			for srv, tools := range tt.lacks {
				for _, tool := range tools {
					if slices.Contains(got[srv], tool) {
						t.Errorf("%s lists tool %s, which its entry filters out", srv, tool)
					}
				}
			}
		})
	}
}

// TestCLICalls: calls with arguments coerced by each tool's schema, JSON
// arguments from stdin, resources and prompts, in both output formats.
func TestCLICalls(t *testing.T) {
	e := newE2E(t)
	cfg := configPath("claude_desktop_config.json")
	run := func(args ...string) result {
		return e.mustRun(t, 0, "", append([]string{"--config", cfg, "--format", "table"}, args...)...)
	}
	if r := run("call", "everything.get-sum", "a=2", "b=3.5"); !strings.Contains(r.stdout, "The sum of 2 and 3.5 is 5.5") {
		t.Errorf("get-sum: %q", r.stdout)
	}
	if r := run("call", "everything.echo", "message=hello e2e"); strings.TrimSpace(r.stdout) != "Echo: hello e2e" {
		t.Errorf("echo: %q", r.stdout)
	}
	// A tool name alone is enough when one server has it.
	if r := run("call", "read_graph"); !strings.Contains(r.stdout, "entities") {
		t.Errorf("read_graph: %q", r.stdout)
	}
	hello := filepath.Join(e.env["FS_ROOT"], "hello.txt")
	if r := run("call", "filesystem.read_text_file", "path="+hello); strings.TrimSpace(r.stdout) != "hello from the filesystem server" {
		t.Errorf("read_text_file: %q", r.stdout)
	}
	// head is a number in the schema: "1" must be sent as 1.
	if r := run("call", "filesystem.read_text_file", "path="+hello, "head=1"); strings.TrimSpace(r.stdout) != "hello from the filesystem server" {
		t.Errorf("read_text_file head=1: %q", r.stdout)
	}
	entities := `{"entities":[{"name":"ferry","entityType":"tool","observations":["reads mcp-servers.json"]}]}`
	e.mustRun(t, 0, entities, "--config", cfg, "call", "memory.create_entities", "--args", "-")
	r := e.mustRun(t, 0, "", "--config", cfg, "--format", "json", "call", "memory__search_nodes", "query=ferry")
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.IsError || len(res.Content) == 0 ||
		!strings.Contains(res.Content[0].Text, "reads mcp-servers.json") {
		t.Errorf("search_nodes after create_entities (memory kept in MEMORY_FILE_PATH): %v %s", err, r.stdout)
	}
	r = e.mustRun(t, 0, "", "--config", cfg, "--format", "json", "resources", "everything")
	var rs struct {
		Resources []struct{ Server, URI string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil || len(rs.Resources) == 0 {
		t.Fatalf("resources: %v %s", err, r.stdout)
	}
	if r := run("read", rs.Resources[0].URI, "--server", "everything"); len(strings.TrimSpace(r.stdout)) == 0 {
		t.Errorf("read %s: empty", rs.Resources[0].URI)
	}
	if r := run("prompts", "everything"); !strings.Contains(r.stdout, "everything.simple-prompt") {
		t.Errorf("prompts: %q", r.stdout)
	}
	if r := run("prompt", "everything.args-prompt", "city=Paris"); !strings.Contains(r.stdout, "Paris") {
		t.Errorf("prompt: %q", r.stdout)
	}
}

// TestCLITrace: --trace on stderr and --trace-file as NDJSON, with the
// progress notifications of a long-running operation.
func TestCLITrace(t *testing.T) {
	e := newE2E(t)
	file := filepath.Join(t.TempDir(), "trace.ndjson")
	r := e.mustRun(t, 0, "", "--config", configPath("mcp-servers.json"), "--trace", "--trace-file", file, "--format", "json",
		"call", "everything.trigger-long-running-operation", "duration=1", "steps=3")
	for _, want := range []string{"-> everything #1 server/discover (request", "<- everything #", " initialize (response, ",
		"tools/call (request", "notifications/progress (notification", "tools/call (response, "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("--trace lacks %q:\n%s", want, r.stderr)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	type line struct {
		Server, Dir, Kind, Method string
		ID                        json.RawMessage
		Size                      int
		MS                        *float64
		Message                   json.RawMessage
	}
	var lines []line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("not NDJSON: %v: %s", err, sc.Bytes())
		}
		if l.Size != len(l.Message) {
			t.Errorf("size %d of a %d-byte message", l.Size, len(l.Message))
		}
		lines = append(lines, l)
	}
	var progress, callAnswered bool
	for _, l := range lines {
		progress = progress || l.Method == "notifications/progress" && l.Dir == "recv"
		if l.Method == "tools/call" && l.Kind == "response" {
			callAnswered = l.MS != nil && *l.MS >= 900 // the operation lasts a second
		}
	}
	if !progress || !callAnswered {
		t.Errorf("trace file: progress %v, tools/call answer with its latency %v\n%s", progress, callAnswered, data)
	}
}

// TestCLIExitCodes: 0 ok, 1 usage and configuration, 3 authentication
// refused, 4 unreachable, 5 tool error; one line of JSON on stderr in
// JSON mode.
func TestCLIExitCodes(t *testing.T) {
	e := newE2E(t)
	cfg := configPath("claude_desktop_config.json")
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(unauthorized.Close)
	missingVar := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(missingVar, []byte(`{"mcpServers": {"api": {"command": "x", "env": {"API_KEY": "${FERRY_E2E_UNSET_KEY}"}}}}`), 0o644)
	closed := freePort(t)
	tests := []struct {
		name string
		code int
		kind string
		args []string
	}{
		{"ok", 0, "", []string{"--config", cfg, "tools", "everything"}},
		{"unknown command", 1, "usage", []string{"--config", cfg, "frobnicate"}},
		{"unknown server", 1, "usage", []string{"--config", cfg, "tools", "nosuch"}},
		{"unknown tool", 1, "unknown", []string{"--config", cfg, "call", "everything.nosuch"}},
		{"bad argument", 1, "usage", []string{"--config", cfg, "call", "everything.get-sum", "a=two", "b=1"}},
		{"missing variable", 1, "config", []string{"--config", missingVar, "tools"}},
		{"auth", 3, "auth", []string{"tools", unauthorized.URL + "/mcp"}},
		{"no such program", 4, "unreachable", []string{"tools", "--", "/nonexistent/mcp-server"}},
		{"exits at once", 4, "unreachable", []string{"tools", "--", "sh", "-c", "echo 'missing API key' >&2; exit 2"}},
		{"connection refused", 4, "unreachable", []string{"tools", fmt.Sprintf("http://127.0.0.1:%d/mcp", closed)}},
		{"tool error", 5, "tool_error", []string{"--config", cfg, "call", "filesystem.read_text_file", "path=/etc/hostname"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := e.mustRun(t, tt.code, "", append([]string{"--format", "json"}, tt.args...)...)
			if tt.code == 0 {
				if r.stderr != "" {
					t.Errorf("stderr: %s", r.stderr)
				}
				return
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("stderr is not one line:\n%s", r.stderr)
			}
			var l struct {
				Error struct {
					Code                            int
					Kind, Message, Variable, Stderr string
				}
			}
			if err := json.Unmarshal([]byte(r.stderr), &l); err != nil || l.Error.Code != tt.code || l.Error.Kind != tt.kind || l.Error.Message == "" {
				t.Errorf("stderr %s (%v), want code %d kind %s", r.stderr, err, tt.code, tt.kind)
			}
			switch tt.name {
			case "missing variable":
				if l.Error.Variable != "FERRY_E2E_UNSET_KEY" || !strings.Contains(l.Error.Message, `server "api": env.API_KEY: variable FERRY_E2E_UNSET_KEY is not set`) {
					t.Errorf("missing variable not named: %+v", l.Error)
				}
			case "exits at once":
				if !strings.Contains(l.Error.Stderr, "missing API key") {
					t.Errorf("the server's stderr is not shown: %+v", l.Error)
				}
			case "auth":
				if !strings.Contains(l.Error.Message, "401") {
					t.Errorf("auth: %+v", l.Error)
				}
			}
		})
	}
	// In table mode, the same failure is a line for people.
	r := e.mustRun(t, 1, "", "--config", missingVar, "--format", "table", "tools")
	if !strings.HasPrefix(r.stderr, "ferry: ") || !strings.Contains(r.stderr, "FERRY_E2E_UNSET_KEY") {
		t.Errorf("table mode: %q", r.stderr)
	}
}

// TestCLICrashRestart: a server that crashes while starting is restarted
// (the first start fails on purpose, the second runs server-memory).
func TestCLICrashRestart(t *testing.T) {
	e := newE2E(t)
	dir := t.TempDir()
	e.env["CRASH_MARK"] = filepath.Join(dir, "crashed-once")
	e.env["MEMORY_ENTRY"] = filepath.Join(nodeModules, "@modelcontextprotocol", "server-memory", "dist", "index.js")
	cfg := filepath.Join(dir, "mcp-servers.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"flaky": {"command": "sh", "args": ["-c",
		"if [ -e \"$CRASH_MARK\" ]; then exec \"$FERRY_NODE\" \"$MEMORY_ENTRY\"; fi; touch \"$CRASH_MARK\"; echo 'crashing on purpose' >&2; exit 7"],
		"env": {"MEMORY_FILE_PATH": "${MEMORY_FILE}", "CRASH_MARK": "${CRASH_MARK}", "FERRY_NODE": "${FERRY_NODE}", "MEMORY_ENTRY": "${MEMORY_ENTRY}"}}}}`), 0o644)
	r := e.mustRun(t, 0, "", "--config", cfg, "--format", "json", "-v", "servers")
	var st struct {
		Servers []struct {
			Name, Status string
			Restarts     int
			Tools        *int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || len(st.Servers) != 1 {
		t.Fatalf("%v %s", err, r.stdout)
	}
	if s := st.Servers[0]; s.Status != "ready" || s.Restarts != 1 || s.Tools == nil || *s.Tools == 0 {
		t.Errorf("after a crash: %+v", s)
	}
	for _, want := range []string{"crashing on purpose", "exit status 7", "server down", "connected"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("-v does not show %q:\n%s", want, r.stderr)
		}
	}
	// A server that keeps crashing is given up after three attempts.
	os.WriteFile(cfg, []byte(`{"mcpServers": {"broken": {"command": "sh", "args": ["-c", "echo 'still broken' >&2; exit 9"]}}}`), 0o644)
	r = e.mustRun(t, 4, "", "--config", cfg, "--format", "json", "servers")
	if !strings.Contains(r.stdout, `"restarts": 2`) || !strings.Contains(r.stderr, "still broken") {
		t.Errorf("given up: %s\n%s", r.stdout, r.stderr)
	}
}

// startEverythingMode runs server-everything in an HTTP mode on a free
// port and returns its URL (with path) once its stderr says ready.
func startEverythingMode(t *testing.T, mode, ready, path string) string {
	t.Helper()
	entry := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	port := freePort(t)
	cmd := exec.Command(nodeBin, entry, mode)
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(buf.String(), ready) {
		if time.Now().After(deadline) {
			t.Fatalf("server-everything %s did not start:\n%s", mode, buf.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d%s", port, path)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
