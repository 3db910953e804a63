package apisurface_test

import (
	"fmt"
	"go/ast"
	"maps"
	"slices"
	"strings"
	"testing"
)

// nameBudget is the most exported names the core packages may have:
// go-sdk v1.8.0's, counted the same way (issue 30), for ground that ferry
// covers with every feature of its own beside. A new name must take the
// place of one that goes.
const nameBudget = 461

// budgetPackages are the core packages the budget holds: what a program
// that serves or calls MCP imports.
var budgetPackages = []string{"protocol", "server", "client", "jsonrpc", "transport"}

// countExported counts p's exported names as the budget does: top-level
// functions, types, constants and variables, and the methods of exported
// types; not fields, which are what a type holds rather than more API to
// learn.
func countExported(p *pkg) int {
	n := 0
	for _, fl := range p.files {
		for _, decl := range fl.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && exportedRecv(d) {
					n++
				}
			case *ast.GenDecl:
				n += exportedSpecs(d)
			}
		}
	}
	return n
}

// exportedSpecs counts the exported types, constants and variables of d.
func exportedSpecs(d *ast.GenDecl) int {
	n := 0
	for _, spec := range d.Specs {
		switch s := spec.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() {
				n++
			}
		case *ast.ValueSpec:
			for _, name := range s.Names {
				if name.IsExported() {
					n++
				}
			}
		}
	}
	return n
}

// TestExportedNameBudget: the core packages export at most nameBudget
// names (issue 30: 571 grew to 634 while go-sdk has 461). The failure
// lists each package's count, to show where the names went.
func TestExportedNameBudget(t *testing.T) {
	counts := map[string]int{}
	total := 0
	for _, p := range libraryPackages(t) {
		if !slices.ContainsFunc(budgetPackages, func(c string) bool { return p.dir == c || strings.HasPrefix(p.dir, c+"/") }) {
			continue
		}
		counts[p.dir] = countExported(p)
		total += counts[p.dir]
	}
	if counts["protocol"] == 0 || counts["client"] == 0 || counts["server"] == 0 {
		t.Fatalf("core packages not found: %v", counts)
	}
	t.Logf("%d exported names in the core packages (budget %d)", total, nameBudget)
	if total <= nameBudget {
		return
	}
	var b strings.Builder
	for _, dir := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "\t%4d %s\n", counts[dir], dir)
	}
	t.Errorf("the core packages export %d names, over the budget of %d by %d: unexport what only ferry's packages use, or fold near-duplicates\n%s", total, nameBudget, total-nameBudget, b.String())
}
