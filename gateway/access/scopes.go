package access

import (
	"net/http"
	"strings"

	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
)

// ToolScopes returns, for auth/resourceserver's Config.ToolScopesFunc,
// the scopes a call of tool by caller through the endpoint of r lacks
// where they are all the policy in force wants to allow it: what lets the
// resource server answer 403 insufficient_scope, naming them, for the
// client to step up from, before the call is read further. It decides
// where the endpoint's path tells the tool's qualified name without the
// catalog (sep joins a server's name and its tool's): /servers/NAME/, and
// the aggregated /mcp and /message, and a view's /views/NAME/ (through
// gateway.ViewTool), when their names always carry their server's
// (prefixed). Elsewhere the middleware refuses the same call with an
// insufficient_scope JSON-RPC error.
func (l *Live) ToolScopes(sep string, prefixed bool) func(r *http.Request, c *intercept.Caller, tool string) []string {
	return func(r *http.Request, c *intercept.Caller, tool string) []string {
		name, ok := qualified(r, sep, prefixed, tool)
		if !ok {
			return nil
		}
		t := Target{Kind: Tool, Name: name}
		if strings.HasPrefix(r.URL.Path, "/views/") {
			t.Alias = r.PathValue("name") + ":" + tool // as the middleware names it
		}
		d := l.Policy().Decide(c, t)
		if d.Allowed {
			return nil
		}
		return d.MissingScopes
	}
}

// qualified is the qualified name of tool as the endpoint of r shows it,
// when its path tells it.
func qualified(r *http.Request, sep string, prefixed bool, tool string) (string, bool) {
	if strings.HasPrefix(r.URL.Path, "/views/") {
		name, ok := gateway.ViewTool(r, tool) // /mcp's name of the view's tool
		return name, ok && prefixed
	}
	if strings.HasPrefix(r.URL.Path, "/servers/") {
		if server := r.PathValue("name"); server != "" {
			return server + sep + tool, true
		}
		return "", false
	}
	switch r.URL.Path {
	case "/mcp", "/message":
		return tool, prefixed
	}
	return "", false
}
