package apisurface_test

import (
	"go/ast"
	"path"
	"strings"
	"testing"
)

// exportedTypes returns the exported type names p declares.
func exportedTypes(p *pkg) map[string]bool {
	types := map[string]bool{}
	for _, fl := range p.files {
		for _, decl := range fl.ast.Decls {
			if d, ok := decl.(*ast.GenDecl); ok {
				for _, spec := range d.Specs {
					if s, ok := spec.(*ast.TypeSpec); ok && s.Name.IsExported() {
						types[s.Name.Name] = true
					}
				}
			}
		}
	}
	return types
}

// counterparts are the types named Client or Server outside the client
// and server packages that are an MCP client's or server's other face, and
// so read rightly beside client.Client and server.Server.
var counterparts = map[string]string{
	"config.Server": "a configured MCP server",
	"host.Server":   "an MCP server the host runs",
	"skills.Client": "the skills extension on a client.Client",
	"skills.Server": "the skills extension on a server.Server",
}

// TestNoNamesakeCollisions: Client and Server name MCP's two sides. A type
// of another package with either name is one of their counterparts, so
// that a name such as auth.Client (an OAuth client's registration) cannot
// be read as client.Client.
func TestNoNamesakeCollisions(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range libraryPackages(t) {
		for _, name := range []string{"Client", "Server"} {
			if !exportedTypes(p)[name] || p.dir == strings.ToLower(name) {
				continue
			}
			q := path.Base(p.dir) + "." + name
			seen[q] = true
			if counterparts[q] == "" {
				t.Errorf("%s reads like %s.%s: name it after what it is, or add it to counterparts with why it is an MCP %s", q, strings.ToLower(name), name, strings.ToLower(name))
			}
		}
	}
	for q := range counterparts {
		if !seen[q] {
			t.Errorf("%s is in counterparts but no longer in the source: take it out", q)
		}
	}
}
