package main

import (
	"testing"

	"github.com/ferrymcp/ferry/config"
)

// The command printed after a task is left running reaches the same
// server from another process: by name with the configuration files
// given, or by the URL given (its password hidden), quoted for a shell.
func TestTasksCommandLine(t *testing.T) {
	for _, tc := range []struct {
		name     string
		configs  []string
		protocol string
		srv      config.Server
		want     string
	}{
		{"config entry", []string{"tasks.json"}, "", config.Server{Name: "conf", Source: "/tmp/tasks.json"},
			"ferry tasks --wait --config tasks.json conf ID"},
		{"default config", nil, "2025-11-25", config.Server{Name: "conf", Source: "/home/u/.mcp.json"},
			"ferry tasks --wait --protocol 2025-11-25 conf ID"},
		{"URL given", nil, "", config.Server{Name: "127.0.0.1-3121", Source: "command line", URL: "http://127.0.0.1:3121/mcp"},
			"ferry tasks --wait http://127.0.0.1:3121/mcp ID"},
		{"password hidden", nil, "", config.Server{Name: "h", Source: "command line", URL: "https://u:secret@h/mcp"},
			"ferry tasks --wait https://u:xxxxx@h/mcp ID"},
		{"quoted", []string{"my tasks.json"}, "", config.Server{Name: "it's", Source: "x"},
			`ferry tasks --wait --config 'my tasks.json' 'it'\''s' ID`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &cli{configs: tc.configs, protocol: tc.protocol}
			if got := o.tasksCommandLine(&tc.srv, true, "ID"); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
