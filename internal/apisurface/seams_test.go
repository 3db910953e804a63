package apisurface_test

import (
	"go/ast"
	"slices"
	"strings"
	"testing"
)

// seamPackages are the internal packages that reach into the engine and
// the server past their public API.
var seamPackages = []string{
	"github.com/ferrymcp/ferry/internal/jsonrpc2",
	"github.com/ferrymcp/ferry/internal/jsonrpcapi",
	"github.com/ferrymcp/ferry/internal/serverapi",
}

// publicOnly are the folders (with those under them) whose packages are
// built as a user would build them: on the public API of the core
// packages alone (issue 30). seamPending are those that still reach past
// it (issue 30 emptied it).
var (
	publicOnly  = []string{"observe", "auth/resourceserver", "gateway"}
	seamPending = map[string]bool{}
)

// TestPublicAPIOnly: observe, the resource server and the gateway import
// no internal package that reaches past the public API of jsonrpc, server
// or intercept: what they do, a user's package can.
func TestPublicAPIOnly(t *testing.T) {
	for _, p := range rootPackages(t, false) {
		if !under(p.dir, publicOnly) {
			continue
		}
		var uses []string
		for _, f := range p.files {
			for _, path := range f.imports {
				for _, seam := range seamPackages {
					if path == seam {
						uses = append(uses, f.path+" imports "+path)
					}
				}
			}
		}
		switch {
		case len(uses) > 0 && !seamPending[p.dir]:
			t.Errorf("%s reaches past the public API:\n\t%s", p.dir, strings.Join(uses, "\n\t"))
		case len(uses) == 0 && seamPending[p.dir]:
			t.Errorf("%s is in seamPending but uses only public API: take it out", p.dir)
		}
	}
}

// under reports whether dir is one of roots or under one.
func under(dir string, roots []string) bool {
	for _, r := range roots {
		if dir == r || strings.HasPrefix(dir, r+"/") {
			return true
		}
	}
	return false
}

// engineNames are the engine's connection and its options, internal
// (internal/jsonrpc2) since issue 30: jsonrpc keeps what a transport
// needs.
var engineNames = []string{"Conn", "NewConn", "ConnOptions", "Handler", "HandlerFunc"}

// TestNoEngineConnInAPI: what server and client give users names no
// engine type (server.Connect returns the connection's *server.Session,
// not the *jsonrpc.Conn the engine runs it with), and jsonrpc exports
// none of the engine's connection (issue 30).
func TestNoEngineConnInAPI(t *testing.T) {
	for _, p := range libraryPackages(t) {
		if p.dir == "jsonrpc" {
			exportedNames(p, func(name string) {
				if slices.Contains(engineNames, name) {
					t.Errorf("jsonrpc exports %s, the engine's", name)
				}
			})
		}
		if p.dir != "server" && p.dir != "client" {
			continue
		}
		for _, fl := range p.files {
			for _, decl := range fl.ast.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || !fn.Name.IsExported() || !exportedRecv(fn) {
					continue
				}
				ast.Inspect(fn.Type, func(n ast.Node) bool {
					if namesJSONRPCConn(n, fl.imports) {
						t.Errorf("%s: %s takes or returns the engine's jsonrpc.Conn", p.dir, fn.Name.Name)
					}
					return true
				})
			}
		}
	}
}

// namesJSONRPCConn reports whether n is the type name jsonrpc.Conn.
func namesJSONRPCConn(n ast.Node, imports map[string]string) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Conn" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && imports[id.Name] == "github.com/ferrymcp/ferry/jsonrpc"
}
