package apisurface_test

import (
	"go/ast"
	"maps"
	"slices"
	"testing"
)

// initPending are the library files that still wire packages together
// in an init function (issue 30 emptied it): a package works because it
// is imported, not because some other package happened to be.
var initPending = map[string]bool{}

// TestNoInitFunctions: no library package has an init function (each is
// a package variable written at start-up, and an import some other
// package needs for its own to work), but those still pending.
func TestNoInitFunctions(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range rootPackages(t, true) {
		for _, f := range p.files {
			for _, d := range f.ast.Decls {
				if isInit(d) {
					seen[f.path] = true
				}
			}
		}
	}
	for _, path := range slices.Sorted(maps.Keys(seen)) {
		if !initPending[path] {
			t.Errorf("%s: an init function; have the packages that need what it sets import it, or make it a variable's initial value", path)
		}
	}
	for path := range initPending {
		if !seen[path] {
			t.Errorf("%s is in initPending but has no init function: take it out", path)
		}
	}
}

// isInit reports whether d is a package's func init.
func isInit(d ast.Decl) bool {
	fn, ok := d.(*ast.FuncDecl)
	return ok && fn.Recv == nil && fn.Name.Name == "init"
}
