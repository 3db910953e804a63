package config

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testVars is the fixed environment of the golden tests.
func testVars() Vars {
	env := map[string]string{
		"HOME": "/home/u", "GITHUB_TOKEN": "ghp_test", "SEARCH_KEY": "sk-1",
		"API_KEY": "k-2", "EMPTY": "",
	}
	return Vars{
		Lookup:    func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Home:      "/home/u",
		Workspace: "/work/project",
	}
}

// golden is what a parsed file looks like in a .golden file.
type golden struct {
	Format  string         `json:"format"`
	Servers []goldenServer `json:"servers"`
}

type goldenServer struct {
	*Server
	Timeout string `json:"timeout,omitempty"`
	Error   string `json:"error,omitempty"`
}

func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, path := range files {
		name := filepath.Base(path)
		if name == "syntax_error.json" || name == "no_servers.json" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			f, err := Load(path, &Options{Vars: testVars()})
			if err != nil {
				t.Fatal(err)
			}
			g := golden{Format: f.Format}
			for _, s := range f.Servers {
				gs := goldenServer{Server: s}
				if s.Timeout != 0 {
					gs.Timeout = s.Timeout.String()
				}
				if s.Err != nil {
					gs.Error = s.Err.Error()
				}
				g.Servers = append(g.Servers, gs)
			}
			got, _ := json.MarshalIndent(g, "", "  ")
			got = append(got, '\n')
			gpath := strings.TrimSuffix(path, ".json") + ".golden"
			if *update {
				os.WriteFile(gpath, got, 0o644)
				return
			}
			want, err := os.ReadFile(gpath)
			if err != nil {
				t.Fatalf("%v (run go test ./config -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s:\n%s", path, gpath, got)
			}
		})
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"syntax", `{"mcpServers": {"a": {"command": "x"}`, "f.json:1:38: invalid JSON: unexpected EOF"},
		{"garbage", `{"mcpServers": {"a": {"command": x}}}`, "f.json:1:34: invalid JSON"},
		{"no servers", `{"version": 1}`, `f.json: no "mcpServers" or "servers" object`},
		{"array", `[]`, "f.json: not a JSON object"},
		{"servers not object", `{"mcpServers": []}`, `f.json: "mcpServers" must be an object of servers`},
		{"trailing data", `{"mcpServers": {}} {}`, "invalid JSON: unexpected data after the top-level object"},
		{"duplicate server", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, "duplicate object member name"},
		{"line numbers", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": tru}\n  }\n}", "f.json:3:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.json", []byte(tt.data), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.File != "f.json" {
				t.Errorf("error %#v is not a *config.Error naming the file", err)
			}
		})
	}
	_, err := Parse("f.json", []byte(`{"x": 1}`), nil)
	if !errors.Is(err, ErrNoServers) {
		t.Errorf("no servers: %v does not wrap ErrNoServers", err)
	}
}

// TestMissingVariable: the error names the file, the server, the key and
// the variable.
func TestMissingVariable(t *testing.T) {
	data := `{"mcpServers": {"db": {"command": "srv", "args": ["--dsn", "${DB_URL}"]}, "ok": {"command": "x"}}}`
	f, err := Parse("/etc/mcp.json", []byte(data), &Options{Vars: testVars()})
	if err != nil {
		t.Fatal(err)
	}
	db, ok := f.Servers[0], f.Servers[1]
	want := `/etc/mcp.json: server "db": args[1]: variable DB_URL is not set`
	if db.Err == nil || db.Err.Error() != want {
		t.Fatalf("error %v, want %s", db.Err, want)
	}
	if MissingVar(db.Err) != "DB_URL" {
		t.Errorf("MissingVar = %q", MissingVar(db.Err))
	}
	var ce *Error
	if !errors.As(db.Err, &ce) || ce.Server != "db" || ce.Key != "args[1]" {
		t.Errorf("%#v", db.Err)
	}
	if ok.Err != nil {
		t.Errorf("the other server failed too: %v", ok.Err)
	}
}

func TestExpand(t *testing.T) {
	v := testVars()
	tests := []struct{ in, want, missing string }{
		{"plain", "plain", ""},
		{"$HOME stays", "$HOME stays", ""},
		{"${HOME}/x", "/home/u/x", ""},
		{"${env:API_KEY}", "k-2", ""},
		{"${NOPE:-dflt}", "dflt", ""},
		{"${EMPTY:-dflt}", "dflt", ""},
		{"${EMPTY-dflt}", "", ""},
		{"${NOPE-dflt}", "dflt", ""},
		{"${NOPE:-${HOME}/d}", "/home/u/d", ""},
		{"${NOPE:-${ALSO_NOPE}}", "", "ALSO_NOPE"},
		{"a ${NOPE} b", "", "NOPE"},
		{"${env:NOPE}", "", "NOPE"},
		{"${input:key}", "", "input:key"},
		{"${userHome}/.x ${workspaceFolder} ${workspaceFolderBasename}", "/home/u/.x /work/project project", ""},
		{"${API_KEY}${API_KEY}", "k-2k-2", ""},
		{"${env:EMPTY:-e}", "e", ""},
	}
	for _, tt := range tests {
		got, err := v.Expand(tt.in)
		if tt.missing != "" {
			if MissingVar(err) != tt.missing {
				t.Errorf("Expand(%q): error %v, want missing %s", tt.in, err, tt.missing)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"${HOME", "${}", "${1X}", "${a b}"} {
		if _, err := v.Expand(bad); err == nil {
			t.Errorf("Expand(%q) did not fail", bad)
		}
	}
}

func TestTimeoutUnits(t *testing.T) {
	for in, want := range map[string]time.Duration{
		`60`: time.Minute, `30000`: 30 * time.Second, `"1m30s"`: 90 * time.Second, `0.5`: 500 * time.Millisecond,
	} {
		f, err := Parse("f.json", []byte(`{"mcpServers": {"a": {"command": "x", "timeout": `+in+`}}}`), nil)
		if err != nil || f.Servers[0].Err != nil || f.Servers[0].Timeout != want {
			t.Errorf("timeout %s: %v %v %v, want %v", in, err, f.Servers[0].Err, f.Servers[0].Timeout, want)
		}
	}
}

func TestClaudeJSONProjects(t *testing.T) {
	data := `{"numStartups": 3, "mcpServers": {"user": {"command": "u"}},
		"projects": {"/src/a": {"mcpServers": {"pa": {"command": "a"}}}, "/src/b": {"mcpServers": {"pb": {"command": "b"}}}}}`
	f, err := Parse("/home/u/.claude.json", []byte(data), &Options{Project: "/src/b"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range f.Servers {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "user,pb" {
		t.Errorf("servers %v, want user,pb", names)
	}
}

func TestStripJSONC(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{`{"a": "//not a comment", "b": "/*x*/"}`, `{"a": "//not a comment", "b": "/*x*/"}`},
		{"{\"a\": 1, // c\n}", "{\"a\": 1      \n}"},
		{`{"a": [1, 2,], }`, `{"a": [1, 2 ]  }`},
		{`{/* a, */"a": "\"," }`, `{        "a": "\"," }`},
		{"/* multi\nline */{}", "        \n       {}"},
	}
	for _, tt := range tests {
		if got := string(stripJSONC([]byte(tt.in))); got != tt.want {
			t.Errorf("stripJSONC(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	got := splitCommand(`npx -y "@scope/pkg" --name 'a b' c\ d`)
	want := []string{"npx", "-y", "@scope/pkg", "--name", "a b", "c d"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestIsolation(t *testing.T) {
	for in, want := range map[string]string{`"session"`: "session", `"shared"`: "shared", `null`: ""} {
		f, err := Parse("f.json", []byte(`{"mcpServers": {"a": {"command": "x", "isolation": `+in+`}}}`), nil)
		if err != nil || f.Servers[0].Err != nil || f.Servers[0].Isolation != want {
			t.Errorf("isolation %s: %v %v %q, want %q", in, err, f.Servers[0].Err, f.Servers[0].Isolation, want)
		}
	}
	f, err := Parse("f.json", []byte(`{"mcpServers": {"a": {"command": "x", "isolation": "process"}}}`), nil)
	if err != nil || f.Servers[0].Err == nil || !strings.Contains(f.Servers[0].Err.Error(), "isolation") {
		t.Errorf("isolation \"process\": %v %v, want an error about isolation", err, f.Servers[0].Err)
	}
}
