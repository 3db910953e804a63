package access

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
)

// The scopes a call lacks are told where the endpoint's path names the
// tool's server, for the resource server's 403.
func TestToolScopes(t *testing.T) {
	live := NewLive(compile(t, &config.Access{Rules: []config.AccessRule{
		{Allow: &config.Condition{Roles: []string{"ops"}, Scopes: []string{"deploy"}}, Tools: []string{"ci__deploy"}},
		{Allow: &config.Condition{}, Tools: []string{"ci__status"}},
	}}))
	ops := &intercept.Caller{ID: "o", Roles: []string{"ops"}}
	guest := &intercept.Caller{ID: "g"}
	tests := []struct {
		path, tool string
		prefixed   bool
		c          *intercept.Caller
		want       string
	}{
		{"/mcp", "ci__deploy", true, ops, "deploy"},
		{"/message", "ci__deploy", true, ops, "deploy"},
		{"/mcp", "ci__deploy", false, ops, ""}, // names not always prefixed: the middleware decides
		{"/servers/ci/mcp", "deploy", true, ops, "deploy"},
		{"/servers/ci/mcp", "status", true, ops, ""},
		{"/mcp", "ci__deploy", true, guest, ""}, // no role: no scope would allow it
		{"/views/v/mcp", "deploy", true, ops, ""},
	}
	scopes := live.ToolScopes("__", true)
	unprefixed := live.ToolScopes("__", false)
	for _, tt := range tests {
		var got []string
		mux := http.NewServeMux()
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f := scopes
			if !tt.prefixed {
				f = unprefixed
			}
			got = f(r, tt.c, tt.tool)
		})
		mux.Handle("/servers/{name}/{endpoint}", handler)
		mux.Handle("/views/{name}/{endpoint}", handler)
		mux.Handle("/mcp", handler)
		mux.Handle("/message", handler)
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", tt.path, nil))
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s %s prefixed %v: %q, want %q", tt.path, tt.tool, tt.prefixed, got, tt.want)
		}
	}
}
