package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// runFerry runs the command in-process with the given stdin.
func runFerry(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}
	code = run(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

func TestParseFlags(t *testing.T) {
	o, _, err := parseFlags(&env{}, []string{"--trace", "call", "--format", "json", "srv.tool", "a=1", "--env", "K=V", "b=2", "--", "npx", "-y", "pkg", "--x"})
	if err != nil {
		t.Fatal(err)
	}
	if o.cmd != callCommand || strings.Join(o.args, " ") != "srv.tool a=1 b=2" || strings.Join(o.adhoc, " ") != "npx -y pkg --x" ||
		!o.trace || !o.json || len(o.envs) != 1 {
		t.Errorf("%+v", o)
	}
	if _, _, err := parseFlags(&env{}, []string{"--format", "xml", "tools"}); exitCode(err) != exitUsage {
		t.Errorf("bad format: %v", err)
	}
	if _, _, err := parseFlags(&env{}, []string{"--nope"}); exitCode(err) != exitUsage {
		t.Errorf("unknown flag: %v", err)
	}
	o, _, _ = parseFlags(&env{stdoutTTY: true}, []string{"tools"})
	if o.json {
		t.Error("JSON on a terminal")
	}
}

func TestCoerce(t *testing.T) {
	schema := `{"type":"object","properties":{
		"s":{"type":"string"},"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},
		"a":{"type":"array","items":{"type":"integer"}},"o":{"type":"object"},"sn":{"type":["string","null"]},
		"in":{"type":["integer","null"]}}}`
	tests := []struct{ pair, want string }{
		{"s=42", `{"s":"42"}`}, {"n=1.5", `{"n":1.5}`}, {"n=.5", `{"n":0.5}`}, {"i=7", `{"i":7}`}, {"i=7.0", `{"i":7}`},
		{"b=true", `{"b":true}`}, {"a=1,2,3", `{"a":[1,2,3]}`}, {"a=[4]", `{"a":[4]}`}, {"a=", `{"a":[]}`},
		{`o={"x":1}`, `{"o":{"x":1}}`}, {"sn=null", `{"sn":"null"}`}, {"in=null", `{"in":null}`},
		{"free=12", `{"free":12}`}, {"free=hello", `{"free":"hello"}`}, {`free={"a":[1]}`, `{"free":{"a":[1]}}`},
		{`raw:=[1,"x"]`, `{"raw":[1,"x"]}`}, {"eq=a=b", `{"eq":"a=b"}`},
	}
	for _, tt := range tests {
		got, err := toolArguments([]byte(schema), "", nil, []string{tt.pair})
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: %s %v, want %s", tt.pair, got, err, tt.want)
		}
	}
	for _, bad := range []string{"n=x", "i=1.5", "b=maybe", "o=[1]", "a=1,x", "noequals", "raw:=[1"} {
		if _, err := toolArguments([]byte(schema), "", nil, []string{bad}); exitCode(err) != exitUsage {
			t.Errorf("%s: %v", bad, err)
		}
	}
	got, err := toolArguments([]byte(schema), "-", strings.NewReader(`{"s":"from stdin","n":2}`), []string{"n=3"})
	if err != nil || string(got) != `{"n":3,"s":"from stdin"}` {
		t.Errorf("--args - and k=v: %s %v", got, err)
	}
}

func TestSplitTarget(t *testing.T) {
	servers := []*config.Server{{Name: "fs"}, {Name: "fs.extra"}, {Name: "mem"}}
	tests := []struct{ in, server, name string }{
		{"fs.read", "fs", "read"}, {"fs.extra.read", "fs.extra", "read"}, {"mem__create", "mem", "create"}, {"read", "", "read"},
	}
	for _, tt := range tests {
		s, n, ok := splitTarget(tt.in, "__", servers)
		if s != tt.server || n != tt.name || ok != (tt.server != "") {
			t.Errorf("%s: %q %q %v", tt.in, s, n, ok)
		}
	}
	if s, n, ok := splitTarget("read", "__", servers[:1]); s != "fs" || n != "read" || !ok {
		t.Errorf("one server: %q %q", s, n)
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{usageErrorf("x"), exitUsage},
		{&config.Error{File: "f", Err: errors.New("x")}, exitUsage},
		{&host.Error{Kind: host.KindConfig, Err: errors.New("x")}, exitUsage},
		{&host.Error{Kind: host.KindAuth, Err: errors.New("x")}, exitAuth},
		{&host.Error{Kind: host.KindUnreachable, Err: errors.New("x")}, exitUnreachable},
		{&host.Error{Kind: host.KindTimeout, Err: errors.New("x")}, exitUnreachable},
		{&toolError{}, exitTool},
		{&callError{&jsonrpc.Error{Code: -32602}}, exitTool},
		{&jsonrpc.Error{Code: -32601}, exitProtocol},
		{errors.Join(&host.Error{Kind: host.KindAuth, Err: errors.New("x")}, usageErrorf("y")), exitAuth},
	}
	for _, tt := range tests {
		if got := exitCode(tt.err); got != tt.code {
			t.Errorf("%T %v: %d, want %d", tt.err, tt.err, got, tt.code)
		}
	}
}

func TestProgressLine(t *testing.T) {
	got := progressLine("s.t", &protocol.ProgressParams{Progress: 2, Total: 4, Message: "half"}, 10)
	if got != "s.t [#####.....]  50% 2/4 half" {
		t.Errorf("%q", got)
	}
	if got := progressLine("s.t", &protocol.ProgressParams{Progress: 7}, 10); got != "s.t 7" {
		t.Errorf("%q", got)
	}
}

func TestFormatTrace(t *testing.T) {
	got := formatTrace(&host.TraceEvent{Server: "s", Kind: "response", ID: "3", Method: "tools/list", Size: 1500,
		Latency: 1500 * time.Microsecond, Message: []byte(`{}`)})
	if got != "<- s #3 tools/list (response, 1.5 kB, 1.5 ms)\n   {}" {
		t.Errorf("%q", got)
	}
}

func TestRunAgainstExampleServer(t *testing.T) {
	code, out, errOut := runFerry(t, "", "tools", "--format", "json", "--", exampleServer)
	var tools struct {
		Tools []struct{ Server, Name, QualifiedName string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &tools) != nil || len(tools.Tools) < 9 || tools.Tools[0].QualifiedName != "everything__"+tools.Tools[0].Name {
		t.Fatalf("tools: %d %s %s", code, out, errOut)
	}
	code, out, _ = runFerry(t, `{"a": 1}`, "call", "add", "--args", "-", "b=2", "--format", "table", "--", exampleServer)
	if code != 0 || out != "{\"sum\":3}\n" {
		t.Errorf("call add: %d %q", code, out)
	}
	code, out, errOut = runFerry(t, "", "call", "everything.fail", "--format", "json", "--", exampleServer)
	var line errorLine
	if code != exitTool || json.Unmarshal([]byte(errOut), &line) != nil || line.Error.Kind != "tool_error" || !strings.Contains(out, `"isError": true`) {
		t.Errorf("call fail: %d %s %s", code, out, errOut)
	}
	code, out, _ = runFerry(t, "", "read", "ferry://readme", "--format", "table", "--", exampleServer)
	if code != 0 || !strings.HasPrefix(out, "# ferry everything") {
		t.Errorf("read: %d %q", code, out)
	}
	code, out, _ = runFerry(t, "", "prompt", "review", "language=go", "--format", "table", "--", exampleServer)
	if code != 0 || !strings.Contains(out, "Please give a brief review of my go code.") {
		t.Errorf("prompt: %d %q", code, out)
	}
	code, out, _ = runFerry(t, "", "resources", "--format", "table", "--", exampleServer)
	if code != 0 || !strings.Contains(out, "ferry://greeting/{name}") {
		t.Errorf("resources: %d %q", code, out)
	}
	code, out, _ = runFerry(t, "", "prompts", "--format", "json", "--", exampleServer)
	if code != 0 || !strings.Contains(out, `"review"`) {
		t.Errorf("prompts: %d %q", code, out)
	}
}

func TestRunConfigErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcp.json")
	os.WriteFile(cfg, []byte(`{"mcpServers": {"ok": {"command": "`+exampleServer+`"},
		"needs-key": {"command": "x", "env": {"KEY": "${FERRY_TEST_UNSET_KEY}"}}}}`), 0o644)
	code, _, errOut := runFerry(t, "", "--config", cfg, "--format", "json", "tools", "needs-key")
	var line errorLine
	if code != exitUsage || json.Unmarshal([]byte(errOut), &line) != nil || line.Error.Variable != "FERRY_TEST_UNSET_KEY" ||
		line.Error.Server != "needs-key" || !strings.Contains(line.Error.Message, "env.KEY") {
		t.Errorf("missing variable: %d %s", code, errOut)
	}
	code, out, _ := runFerry(t, "", "--config", cfg, "--format", "json", "tools", "ok")
	if code != 0 || !strings.Contains(out, `"ok__echo"`) {
		t.Errorf("the other server: %d %s", code, out)
	}
	code, _, errOut = runFerry(t, "", "--config", filepath.Join(dir, "none.json"), "tools")
	if code != exitUsage || !strings.Contains(errOut, "none.json") {
		t.Errorf("missing file: %d %s", code, errOut)
	}
	code, _, _ = runFerry(t, "", "frobnicate")
	if code != exitUsage {
		t.Errorf("unknown command: %d", code)
	}
}

// TestURLName: a server given by URL is named by its host and port as
// written; an IPv6 host is named without ":" (ferry chat's separator)
// and without a leading "-" (a flag on a command line): [::1]:3001 was
// "--1-3001".
func TestURLName(t *testing.T) {
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:3001/mcp", "127.0.0.1-3001"},
		{"https://mcp.example.com/mcp", "mcp.example.com"},
		{"http://localhost:8080", "localhost-8080"},
		{"http://[::1]:3001/mcp", "ip6-localhost-3001"},
		{"http://[0:0:0:0:0:0:0:1]/mcp", "ip6-localhost"},
		{"http://[2001:db8::1]:8080/mcp", "ip6-2001-db8--1-8080"},
		{"http://[fe80::1%25eth0]:9000/", "ip6-fe80--1-eth0-9000"},
		{"http://[::ffff:127.0.0.1]:80/", "127.0.0.1-80"},
		{"ws://[::1]:4000/ws", "ip6-localhost-4000"},
		{"http:///nohost", "server"},
	}
	for _, tt := range tests {
		if got := urlName(tt.url); got != tt.want {
			t.Errorf("urlName(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	// The name in use: a refused connection to [::1] names the server.
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	code, _, errOut := runFerry(t, "", "--format", "table", "tools", "http://[::1]:"+port+"/mcp")
	if want := `server "ip6-localhost-` + port + `" refused the connection`; code != exitUnreachable || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
}
