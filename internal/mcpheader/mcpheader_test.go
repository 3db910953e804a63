package mcpheader

import (
	"net/http"
	"testing"
)

// canonicalKey agrees with net/http for every token.
func TestCanonicalKey(t *testing.T) {
	for _, name := range []string{"Mcp-Param-region", "Mcp-Param-REGION", "Mcp-Param-x-y-z", "Mcp-Param-a1_b2", "Mcp-Param-Tenant-ID",
		"Mcp-Param-!#$%&'*+.^_`|~", "Mcp-Param-9lives", "Mcp-Param--", "mcp-param-lower"} {
		if got, want := canonicalKey(name), http.CanonicalHeaderKey(name); got != want {
			t.Errorf("canonicalKey(%q) = %q, want %q", name, got, want)
		}
	}
}
