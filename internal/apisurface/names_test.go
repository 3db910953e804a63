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

// TestLoggerMeansDiagnostics: Logger names one thing in ferry's API, the
// *slog.Logger field that receives a package's own diagnostics. A logger
// whose records go to an MCP client is a ClientLog, so that no Logger
// sends anything over the wire. (protocol's LoggingMessageParams.Logger
// is the spec's "logger" member, a name, as every protocol field carries
// its member's name.)
func TestLoggerMeansDiagnostics(t *testing.T) {
	for _, p := range libraryPackages(t) {
		if p.dir == "protocol" {
			continue
		}
		for _, fl := range p.files {
			ast.Inspect(fl.ast, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					if n.Name.Name == "Logger" && exportedRecv(n) {
						t.Errorf("%s: func %s: a Logger is a field for diagnostics; name what it does (ClientLog sends to the client)", p.dir, n.Name.Name)
					}
				case *ast.Field:
					for _, name := range n.Names {
						if name.Name == "Logger" && !isSlogLogger(n.Type) {
							t.Errorf("%s: field Logger is not a *slog.Logger", p.dir)
						}
					}
				}
				return true
			})
		}
	}
}

// isSlogLogger reports whether e is *slog.Logger.
func isSlogLogger(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "slog" && sel.Sel.Name == "Logger"
}

// TestOneWordForLentMemory: memory that its owner gives out only for a
// while is lent, in every package: Lend, Lent, LendToolArguments. Borrow
// and loan were once two more words for it (Message.Borrowed,
// CallBorrowed, client.Loan).
func TestOneWordForLentMemory(t *testing.T) {
	for _, p := range rootPackages(t, true) {
		exportedNames(p, func(name string) {
			for _, w := range []string{"Borrow", "Loan"} {
				if strings.Contains(name, w) {
					t.Errorf("%s: %s: say lend or lent", p.dir, name)
				}
			}
		})
	}
}
