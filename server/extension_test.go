package server_test

import (
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestDeclareExtension: an extension declared on the server is in the
// capabilities of both eras (a client of 2025-11-25 reads
// capabilities.extensions too), beside those of the options; the tasks
// extension stays the stateless era's.
func TestDeclareExtension(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    []string
	}{
		{protocol.Version20251125, []string{"com.example/opts", "io.modelcontextprotocol/skills"}},
		{protocol.Version20250326, []string{"com.example/opts", "io.modelcontextprotocol/skills"}},
		{protocol.LatestVersion, []string{"com.example/opts", "io.modelcontextprotocol/skills", protocol.ExtensionTasks}},
	} {
		s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{Capabilities: &protocol.ServerCapabilities{
			Extensions: map[string]any{"com.example/opts": map[string]any{}, protocol.ExtensionTasks: map[string]any{}}}})
		s.DeclareExtension("io.modelcontextprotocol/skills", map[string]any{"directoryRead": true})
		c, done := connect(s, &client.Options{ProtocolVersion: tc.version})
		ext := c.ServerCapabilities().Extensions
		done()
		if len(ext) != len(tc.want) {
			t.Errorf("%s: extensions %v, want %v", tc.version, ext, tc.want)
		}
		for _, name := range tc.want {
			if _, ok := ext[name]; !ok {
				t.Errorf("%s: %s not declared in %v", tc.version, name, ext)
			}
		}
		if got := ext["io.modelcontextprotocol/skills"].(map[string]any)["directoryRead"]; got != true {
			t.Errorf("%s: settings %v", tc.version, ext["io.modelcontextprotocol/skills"])
		}
	}
}
