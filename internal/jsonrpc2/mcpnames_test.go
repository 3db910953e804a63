package jsonrpc2

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// protocolConsts returns the string constants package protocol declares,
// by name, read from its source: this package sits below protocol.
func protocolConsts(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../protocol/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("protocol's sources: %v", err)
	}
	consts := map[string]string{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
			return false
		})
	}
	return consts
}

// TestMCPMethodsInterned: every method name package protocol declares is
// decoded without allocating, with nothing registered at start-up; a name
// added to protocol and not to mcpMethods would cost an allocation per
// message (as the tasks/* names once did).
func TestMCPMethodsInterned(t *testing.T) {
	var declared int
	for name, v := range protocolConsts(t) {
		if !strings.HasPrefix(name, "Method") && !strings.HasPrefix(name, "Notification") {
			continue
		}
		declared++
		msg := `{"jsonrpc":"2.0","method":` + strconv.Quote(v) + `}`
		m, err := Decode([]byte(msg), Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if in := internMethod([]byte(v)); in == "" || unsafe.StringData(m.Method) != unsafe.StringData(in) {
			t.Errorf("protocol.%s (%q) is not interned", name, v)
		}
	}
	if declared != len(mcpMethods) {
		t.Errorf("%d method constants in protocol, %d in mcpMethods", declared, len(mcpMethods))
	}
}

// TestSniffNamesAreProtocols: the _meta member the decoder reads the
// protocol version from is the one package protocol names.
func TestSniffNamesAreProtocols(t *testing.T) {
	if got, want := sniff.ProtocolVersion, protocolConsts(t)["MetaProtocolVersion"]; got != want {
		t.Errorf("sniff.ProtocolVersion = %q, protocol.MetaProtocolVersion = %q", got, want)
	}
}

// TestInternTable: a name given twice is kept once.
func TestInternTable(t *testing.T) {
	tab := internTable([]string{"a/b", "a/b", "c"})
	if len(tab) != 4 || len(tab[3]) != 1 || len(tab[1]) != 1 {
		t.Errorf("internTable = %q", tab)
	}
}
