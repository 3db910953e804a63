package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
)

// Location is a place where a host keeps its MCP configuration.
type Location struct {
	// Path is the file's path.
	Path string
	// Client names the host that reads it ("Claude Desktop").
	Client string
	// Project is true for a file of the working directory, false for a
	// user-wide one.
	Project bool
}

// Env describes the machine for [Locations]: the operating system
// ("linux", "darwin"), the home folder, $XDG_CONFIG_HOME and the working
// directory.
type Env struct {
	GOOS, Home, XDGConfig, Dir string
}

// HostEnv is this machine's [Env].
func HostEnv() Env {
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	return Env{GOOS: runtime.GOOS, Home: home, XDGConfig: os.Getenv("XDG_CONFIG_HOME"), Dir: wd}
}

// Locations lists the known configuration files, project files first,
// whether they exist or not.
func Locations(env Env) []Location {
	var out []Location
	project := func(rel, client string) {
		out = append(out, Location{Path: filepath.Join(env.Dir, rel), Client: client, Project: true})
	}
	user := func(path, client string) {
		out = append(out, Location{Path: path, Client: client})
	}
	project(".mcp.json", "Claude Code")
	project("mcp-servers.json", "Spring AI")
	project(filepath.Join(".cursor", "mcp.json"), "Cursor")
	project(filepath.Join(".vscode", "mcp.json"), "VS Code")

	h := env.Home
	if h == "" {
		return out
	}
	appSupport := filepath.Join(h, "Library", "Application Support")
	configDir := env.XDGConfig
	if configDir == "" {
		configDir = filepath.Join(h, ".config")
	}
	if env.GOOS == "darwin" {
		configDir = appSupport
	}
	user(filepath.Join(h, ".claude.json"), "Claude Code")
	user(filepath.Join(configDir, "Claude", "claude_desktop_config.json"), "Claude Desktop")
	user(filepath.Join(h, ".cursor", "mcp.json"), "Cursor")
	user(filepath.Join(h, ".codeium", "windsurf", "mcp_config.json"), "Windsurf")
	codeUser := filepath.Join(configDir, "Code", "User")
	user(filepath.Join(codeUser, "mcp.json"), "VS Code")
	user(filepath.Join(codeUser, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"), "Cline")
	user(filepath.Join(h, ".gemini", "settings.json"), "Gemini CLI")
	return out
}

// Discover returns the known configuration files that exist.
func Discover(env Env) []Location {
	var found []Location
	for _, l := range Locations(env) {
		if fi, err := os.Stat(l.Path); err == nil && fi.Mode().IsRegular() {
			found = append(found, l)
		}
	}
	return found
}

// ErrNoServers is wrapped by the error of a file without a server object.
var ErrNoServers = errors.New(`no "mcpServers" or "servers" object`)

// Merge combines the servers of several files in order; the first entry
// of a name wins, and the ones it hides are returned as shadowed.
func Merge(files ...*File) (servers, shadowed []*Server) {
	seen := map[string]bool{}
	for _, f := range files {
		for _, s := range f.Servers {
			if seen[s.Name] {
				shadowed = append(shadowed, s)
				continue
			}
			seen[s.Name] = true
			servers = append(servers, s)
		}
	}
	return servers, shadowed
}
