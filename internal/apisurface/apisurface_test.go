// Package apisurface_test holds ferry's exported API to rules that a
// reviewer would otherwise check by reading: names that do not age, no
// transport plumbing or internal types in what users see, no exported
// mutable state. It parses the library's source (the root module's
// packages outside internal/), so it needs no build of them.
package apisurface_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pkg is one parsed library package: its folder relative to the root, and
// its non-test files with their imports by local name.
type pkg struct {
	dir   string
	files []*file
}

type file struct {
	path    string // relative to the root, with slashes
	ast     *ast.File
	imports map[string]string // local name -> import path
}

// libraryPackages parses every package of the root module outside
// internal/, other modules (folders with a go.mod), main packages and
// testdata.
func libraryPackages(t *testing.T) []*pkg {
	t.Helper()
	pkgs := rootPackages(t, false)
	if len(pkgs) < 8 {
		t.Fatalf("found only %d library packages", len(pkgs))
	}
	return pkgs
}

// rootPackages parses every package of the root module outside other
// modules (folders with a go.mod), main packages, testdata and, unless
// withInternal, internal/.
func rootPackages(t *testing.T, withInternal bool) []*pkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	byDir := map[string]*pkg{}
	var order []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "internal" && !withInternal) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); rel != "." && err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		imports := map[string]string{}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if is.Name != nil {
				name = is.Name.Name
			}
			imports[name] = p
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if byDir[dir] == nil {
			byDir[dir] = &pkg{dir: dir}
			order = append(order, dir)
		}
		byDir[dir].files = append(byDir[dir].files, &file{path: filepath.ToSlash(rel), ast: f, imports: imports})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []*pkg
	for _, dir := range order {
		pkgs = append(pkgs, byDir[dir])
	}
	return pkgs
}

// exportedRecv reports whether a method's receiver is an exported type (or
// whether fn is a plain function).
func exportedRecv(fn *ast.FuncDecl) bool {
	if fn.Recv == nil {
		return true
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.IsExported()
		}
		return false
	}
}

// exportedNames calls f with every exported identifier a package declares:
// types, functions, methods of exported types, constants, variables, and
// the fields and interface methods of exported types.
func exportedNames(p *pkg, f func(name string)) {
	for _, fl := range p.files {
		for _, decl := range fl.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && exportedRecv(d) {
					f(d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						f(s.Name.Name)
						ast.Inspect(s.Type, func(n ast.Node) bool {
							if fld, ok := n.(*ast.Field); ok {
								for _, name := range fld.Names {
									if name.IsExported() {
										f(name.Name)
									}
								}
							}
							return true
						})
					case *ast.ValueSpec:
						for _, name := range s.Names {
							if name.IsExported() {
								f(name.Name)
							}
						}
					}
				}
			}
		}
	}
}

// TestNoAgingNames: "modern" is what ferry once called the stateless
// protocol; the next revision would make it wrong. The spec's words are
// "legacy" and (for 2026-07-28) stateless.
func TestNoAgingNames(t *testing.T) {
	for _, p := range libraryPackages(t) {
		exportedNames(p, func(name string) {
			if strings.Contains(strings.ToLower(name), "modern") {
				t.Errorf("%s: exported name %s says \"modern\"", p.dir, name)
			}
		})
	}
}

// TestNoTransportPlumbingInUserAPI: what only ferry's own transports
// need lives behind internal seams, not among the methods and names a user
// reads in go doc; and jsonrpc shows no MCP: what the decoder picks out
// of params for the MCP layers (Message.Meta once) is theirs, behind the
// seam.
func TestNoTransportPlumbingInUserAPI(t *testing.T) {
	gone := map[string][]string{
		"server":  {"HandleMessage", "ConnectSession", "CheckRequestMeta", "CheckVersion", "NewSession"},
		"jsonrpc": {"Wire", "Member", "Unquote", "Valid", "WithIDHook", "Meta"},
	}
	found := map[string]bool{}
	for _, p := range libraryPackages(t) {
		names, ok := gone[p.dir]
		if !ok {
			continue
		}
		found[p.dir] = true
		exportedNames(p, func(name string) {
			for _, g := range names {
				if name == g {
					t.Errorf("%s exports %s, transport plumbing", p.dir, name)
				}
			}
		})
	}
	// Server.Tool(name) was a lookup for the transports; a user has Tools.
	for _, p := range libraryPackages(t) {
		if p.dir != "server" {
			continue
		}
		for _, fl := range p.files {
			for _, decl := range fl.ast.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && fn.Name.Name == "Tool" {
					t.Errorf("server: (*Server).Tool is exported, a lookup for the transports")
				}
			}
		}
	}
	for dir := range gone {
		if !found[dir] {
			t.Errorf("package %s not found", dir)
		}
	}
}

// TestNoInternalTypesInSignatures: an exported function, method or field
// that takes or returns a type of an internal/ package cannot be called or
// set from outside ferry, and ties users to what may change.
func TestNoInternalTypesInSignatures(t *testing.T) {
	for _, p := range libraryPackages(t) {
		for _, fl := range p.files {
			internal := func(n ast.Node) string {
				var hit string
				ast.Inspect(n, func(n ast.Node) bool {
					if sel, ok := n.(*ast.SelectorExpr); ok {
						if id, ok := sel.X.(*ast.Ident); ok && strings.Contains(fl.imports[id.Name], "/internal/") {
							hit = id.Name + "." + sel.Sel.Name
						}
					}
					return hit == ""
				})
				return hit
			}
			for _, decl := range fl.ast.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && exportedRecv(d) {
						if hit := internal(d.Type); hit != "" {
							t.Errorf("%s: %s takes or returns %s", p.dir, d.Name.Name, hit)
						}
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						ts, ok := spec.(*ast.TypeSpec)
						if !ok || !ts.Name.IsExported() {
							continue
						}
						ast.Inspect(ts.Type, func(n ast.Node) bool {
							fld, ok := n.(*ast.Field)
							if !ok || len(fld.Names) == 0 || !fld.Names[0].IsExported() {
								return true
							}
							if hit := internal(fld.Type); hit != "" {
								t.Errorf("%s: %s.%s is of %s", p.dir, ts.Name.Name, fld.Names[0].Name, hit)
							}
							return false
						})
					}
				}
			}
		}
	}
}

// TestNoExportedMutableState: an exported package-level slice or map (the
// version lists once were) can be changed by any importer, for every user
// of the package in the process.
func TestNoExportedMutableState(t *testing.T) {
	for _, p := range libraryPackages(t) {
		for _, fl := range p.files {
			for _, decl := range fl.ast.Decls {
				d, ok := decl.(*ast.GenDecl)
				if !ok || d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if !name.IsExported() {
							continue
						}
						var typ ast.Expr = vs.Type
						if typ == nil && i < len(vs.Values) {
							if cl, ok := vs.Values[i].(*ast.CompositeLit); ok {
								typ = cl.Type
							}
						}
						switch typ.(type) {
						case *ast.ArrayType, *ast.MapType:
							t.Errorf("%s: exported variable %s is a slice or map anyone may change", p.dir, name.Name)
						}
					}
				}
			}
		}
	}
}
