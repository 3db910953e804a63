package apisurface_test

import (
	"go/ast"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"
)

// corePackages are the folders whose package-level variables are held to
// reviewedState: the core the guide names and what it is built on.
var corePackages = []string{"jsonrpc", "protocol", "server", "client", "intercept", "transport", "jsonschema", "internal"}

// reviewedState is every package-level variable of the core packages,
// with why it is no state that one Server, Client or Conn could see
// another change. Sentinel errors and reflect.TypeFor values are left out.
// A new variable fails TestPackageStateReviewed until it is added here
// with its reason (the streamable headers cache, keyed by an unsafe
// pointer and never emptied, was such a variable; 82241e6 removed it).
var reviewedState = map[string]string{
	// Constant tables, built once, only read.
	"protocol.levelRank":                           "table",
	"protocol.supportedVersions":                   "table, handed out as copies",
	"server.servedMethods":                         "table",
	"internal/jsonrpc2.sniff":                      "table: MCP's member names",
	"internal/jsonrpc2.interned":                   "table: MCP's method names",
	"internal/jsonrpc2.mcpMethods":                 "table",
	"internal/ssewire.bom":                         "table",
	"transport/stdio.newline":                      "table",
	"internal/bodytext.entities":                   "a strings.Replacer, safe for concurrent use",
	"jsonschema.pow10":                             "table",
	"jsonschema.anyNode":                           "table: the schema that accepts anything",
	"jsonschema.typeBits":                          "table",
	"jsonschema.jsonMethodTypes":                   "table",
	"jsonschema.keywords":                          "table",
	"jsonschema.keywordIndex":                      "table",
	"jsonschema/full.printer":                      "a message.Printer for English numbers, only read",
	"internal/jsonfast.needsLook":                  "table",
	"internal/jsonfast.vectorPlain":                "CPU feature, set at start",
	"internal/jsonfast.avx2Plain":                  "CPU feature, set at start",
	"internal/jsonfast.avx2Min":                    "CPU feature, set at start",
	"server.noHandshake":                           "the zero handshake of a session before initialize, only read",
	"transport/streamablehandler.valueJSON":        "a response header's value, shared read-only by every answer",
	"transport/streamablehandler.valueEventStream": "a response header's value, shared read-only by every answer",
	"transport/streamablehandler.valueNoCache":     "a response header's value, shared read-only by every answer",
	"transport/streamablehandler.valueNo":          "a response header's value, shared read-only by every answer",
	"internal/jsonrpc2.turnParked":                 "a marker value, compared by address",
	"internal/jsonrpc2.dropped":                    "a marker value, compared by address",
	"transport/streamable.defaultClient":           "the http.Client used when none is given; safe for concurrent use",
	"internal/leakcheck.Timeout":                   "a test helper's constant",
	// The engine's sentinel errors, the same values under package jsonrpc's
	// names (errors.Is compares them).
	"jsonrpc.ErrClosed":          "sentinel error of internal/jsonrpc2",
	"jsonrpc.ErrNotSent":         "sentinel error of internal/jsonrpc2",
	"jsonrpc.ErrReadInterrupted": "sentinel error of internal/jsonrpc2",
	// Pools of buffers: what they hold belongs to no one between uses.
	"internal/jsonrpc2.appendWriters":  "sync.Pool",
	"transport/memory.encodeBufs":      "sync.Pool",
	"transport/stdio.wires":            "sync.Pool",
	"transport/streamable.bodyBufs":    "sync.Pool",
	"transport/streamablehandler.bufs": "sync.Pool",
	"jsonschema.statePool":             "sync.Pool",
	// Caches keyed by Go type, as encoding/json's: bounded by the types of
	// the program, each entry computed from its type alone.
	"jsonschema.inferCache":   "type-keyed cache",
	"internal/jsonfast.plans": "type-keyed cache",
}

// TestPackageStateReviewed: no package-level variable enters the core
// packages unreviewed (issue 18: "no package-level mutable state").
func TestPackageStateReviewed(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range rootPackages(t, true) {
		if !slices.ContainsFunc(corePackages, func(c string) bool { return p.dir == c || strings.HasPrefix(p.dir, c+"/") }) {
			continue
		}
		for _, f := range p.files {
			for _, name := range packageVars(f.ast) {
				seen[p.dir+"."+name] = true
			}
		}
	}
	if len(seen) == 0 {
		t.Fatal("no package-level variable found in the core packages")
	}
	for _, v := range slices.Sorted(maps.Keys(seen)) {
		if reviewedState[v] == "" {
			t.Errorf("%s: a package-level variable nobody reviewed: state shared by every Server, Client and Conn of the process? Make it a field, or add it to reviewedState with why it is safe", v)
		}
	}
	for v := range reviewedState {
		if !seen[v] {
			t.Errorf("%s is in reviewedState but no longer in the source: take it out", v)
		}
	}
}

// packageVars returns the names of f's package-level variables, except
// those that hold a sentinel error or a reflect.Type.
func packageVars(f *ast.File) []string {
	var names []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name == "_" || (i < len(vs.Values) && isImmutableValue(vs.Values[i])) {
					continue
				}
				names = append(names, n.Name)
			}
		}
	}
	return names
}

// isImmutableValue reports whether e is errors.New(...), fmt.Errorf(...)
// or reflect.TypeFor[T]().
func isImmutableValue(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	fun := c.Fun
	if ix, ok := fun.(*ast.IndexExpr); ok {
		fun = ix.X
	}
	sel, ok := fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	switch pkg.Name + "." + sel.Sel.Name {
	case "errors.New", "fmt.Errorf", "reflect.TypeFor":
		return true
	}
	return false
}
