package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Every method name methods.go declares is interned by the JSON-RPC
// decoder: a name added to the constants and not to methodNames would
// cost an allocation per message (as the tasks/* names once did).
func TestMethodNamesComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "methods.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared int
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Method") && !strings.HasPrefix(n.Name, "Notification") {
					continue
				}
				declared++
				v, _ := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
				if !slices.Contains(methodNames, v) {
					t.Errorf("%s (%q) is not in methodNames", n.Name, v)
				}
			}
		}
	}
	if declared != len(methodNames) {
		t.Errorf("%d method constants, %d methodNames", declared, len(methodNames))
	}
}
