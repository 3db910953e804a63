package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLocations(t *testing.T) {
	tests := []struct {
		env  Env
		want []string
	}{
		{Env{GOOS: "linux", Home: "/home/u", Dir: "/src/p"}, []string{
			"/src/p/.mcp.json", "/src/p/mcp-servers.json", "/src/p/.cursor/mcp.json", "/src/p/.vscode/mcp.json",
			"/home/u/.claude.json", "/home/u/.config/Claude/claude_desktop_config.json", "/home/u/.cursor/mcp.json",
			"/home/u/.codeium/windsurf/mcp_config.json", "/home/u/.config/Code/User/mcp.json",
			"/home/u/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
			"/home/u/.gemini/settings.json",
		}},
		{Env{GOOS: "linux", Home: "/home/u", XDGConfig: "/xdg", Dir: "/p"}, []string{
			"/xdg/Claude/claude_desktop_config.json", "/xdg/Code/User/mcp.json",
		}},
		{Env{GOOS: "darwin", Home: "/Users/u", Dir: "/p"}, []string{
			"/Users/u/Library/Application Support/Claude/claude_desktop_config.json",
			"/Users/u/Library/Application Support/Code/User/mcp.json",
		}},
	}
	for _, tt := range tests {
		var got []string
		for _, l := range Locations(tt.env) {
			got = append(got, l.Path)
		}
		all := strings.Join(got, "\n")
		for _, w := range tt.want {
			if !strings.Contains(all+"\n", w+"\n") {
				t.Errorf("%+v: %s not among\n%s", tt.env, w, all)
			}
		}
	}
}

func TestDiscoverAndMerge(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, ".mcp.json"), `{"mcpServers": {"a": {"command": "project-a"}}}`)
	write(filepath.Join(dir, ".vscode", "mcp.json"), `{"servers": {"v": {"command": "v"}}}`)
	write(filepath.Join(home, ".cursor", "mcp.json"), `{"mcpServers": {"a": {"command": "user-a"}, "c": {"command": "c"}}}`)
	found := Discover(Env{GOOS: "linux", Home: home, Dir: dir})
	if len(found) != 3 || !found[0].Project || found[2].Client != "Cursor" {
		t.Fatalf("found %+v", found)
	}
	var files []*File
	for _, l := range found {
		f, err := Load(l.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	servers, shadowed := Merge(files...)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name+"="+s.Command)
	}
	if strings.Join(names, " ") != "a=project-a v=v c=c" {
		t.Errorf("merged %v", names)
	}
	if len(shadowed) != 1 || shadowed[0].Command != "user-a" {
		t.Errorf("shadowed %+v", shadowed)
	}
	if files[1].Format != "servers" {
		t.Errorf("VS Code format %q", files[1].Format)
	}
}
