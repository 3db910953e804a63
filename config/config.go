// Package config reads the MCP server configurations that hosts already
// use: the "mcpServers" family (Claude Desktop, Claude Code's .mcp.json,
// Cursor, Windsurf, Cline, the Spring AI mcp-servers.json) and VS Code's
// "servers" (.vscode/mcp.json), with the key variants found in the wild.
//
// Every string of a server entry is interpolated: ${VAR},
// ${VAR:-default} and ${env:VAR} from the environment, plus ${userHome}
// and ${workspaceFolder}. A variable that is not set fails the entry with
// an [*Error] naming the file, the server, the key and the variable.
//
// [Parse] reads one file; [Discover] finds the usual files on Linux and
// macOS; [Merge] combines several, the first definition of a name
// winning.
package config

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Transport is how a server is reached.
type Transport string

// The transports of a server entry.
const (
	// Stdio launches the server as a subprocess.
	Stdio Transport = "stdio"
	// HTTP is Streamable HTTP (which falls back to HTTP+SSE by itself).
	HTTP Transport = "http"
	// SSE is the HTTP+SSE transport of 2024-11-05.
	SSE Transport = "sse"
	// WebSocket is MCP over a WebSocket (subprotocol "mcp"): a ws:// or
	// wss:// URL.
	WebSocket Transport = "websocket"
)

// Server is one server entry.
type Server struct {
	// Name is the entry's key in the file.
	Name string `json:"name"`
	// Transport is stdio, http or sse.
	Transport Transport `json:"transport"`

	// Command and Args launch a stdio server; Env is set on top of the
	// few variables of the host's environment it gets (PATH, HOME: see
	// package transport/stdio); Dir is its working directory (a relative
	// cwd is resolved against the file's folder; empty means the host's).
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Dir     string            `json:"cwd,omitempty"`

	// URL and Headers reach an HTTP or SSE server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth is the client the entry's host registered with the server's
	// authorization server, if any.
	OAuth *OAuth `json:"oauth,omitempty"`

	// Disabled entries are listed but not started.
	Disabled bool `json:"disabled,omitempty"`
	// Timeout is the request timeout of the entry; zero means the host's.
	Timeout time.Duration `json:"timeout,omitempty"`
	// AllowedTools, when not empty, are the only tools used; BlockedTools
	// are never used. Both hold tool names or path.Match patterns.
	AllowedTools []string `json:"allowedTools,omitempty"`
	BlockedTools []string `json:"blockedTools,omitempty"`
	// Isolation is how a gateway shares a stdio server between its
	// clients: "" or "shared" (one process for all), "session" (one
	// process per client session, for stateful servers such as browsers
	// and shells).
	Isolation string `json:"isolation,omitempty"`

	// Source is the file the entry comes from.
	Source string `json:"source,omitempty"`
	// Err is why the entry cannot be used (an *[Error]), or nil. Other
	// entries of the file stay usable.
	Err error `json:"-"`
}

// File is one parsed configuration file.
type File struct {
	// Path is the file's path.
	Path string
	// Format is "mcpServers" or "servers" (VS Code).
	Format string
	// Servers are the entries in the order of the file.
	Servers []*Server
	// Agent is the file's "agent" member, ferry's agent settings, as
	// JSON without the comments; nil when there is none.
	Agent jsontext.Value
	// Sections are the gateway's members (identity, access, audit,
	// views, limits) as JSON without the comments, by name: see
	// [File.Section].
	Sections map[string]jsontext.Value
}

// Error is a problem with a configuration: File always, Server and Key
// when the problem is inside an entry (Key is a dotted path such as
// "env.API_KEY" or "args[2]").
type Error struct {
	File   string
	Line   int // 1-based, when known
	Column int
	Server string
	Key    string
	Err    error
}

// Error reads "FILE[:LINE:COL]: server "NAME": KEY: problem".
func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	if e.Server != "" {
		s += fmt.Sprintf(": server %q", e.Server)
	}
	if e.Key != "" {
		s += fmt.Sprintf(": %s", e.Key)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the problem.
func (e *Error) Unwrap() error { return e.Err }

// MissingVarError is a ${VAR} whose variable is not set.
type MissingVarError struct {
	// Name is the variable's name, as written (e.g. "API_KEY" or
	// "input:token").
	Name string
}

// Error reads "variable NAME is not set".
func (e *MissingVarError) Error() string {
	return fmt.Sprintf("variable %s is not set", e.Name)
}

// MissingVar returns the name of the variable that made err, or "".
func MissingVar(err error) string {
	var m *MissingVarError
	if errors.As(err, &m) {
		return m.Name
	}
	return ""
}

// Runs reports whether s and o run the same server: equal entries but
// for the file they come from (and its errors). A host or a gateway
// reading its configuration again restarts only the servers whose entry
// does not.
func (s *Server) Runs(o *Server) bool {
	x, y := *s, *o
	x.Source, y.Source = "", ""
	x.Err, y.Err = nil, nil
	return reflect.DeepEqual(x, y)
}
