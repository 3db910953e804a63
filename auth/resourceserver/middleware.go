package resourceserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// ToolScopesMiddleware returns receiving middleware for the server behind
// Protect (server.Options.Receiving) that holds ToolScopes for every call,
// on the tool the server runs (intercept.Request.Name) and the scopes of
// the caller Protect verified (intercept.CallerFrom). It is what holds
// them for calls Protect never sees one by one: the messages of a
// WebSocket connection, which crosses it once, as the upgrade.
//
// A call of a tool whose scopes the caller lacks is refused with a
// JSON-RPC error whose data is {"error": "insufficient_scope", "scope":
// the scopes the call needs}, what the challenge of a 403 would say; a
// call of such a tool with no caller at all (a transport Protect is not
// in front of) is refused the same way, since no token grants it. Calls
// over Streamable HTTP and HTTP+SSE are POSTs that Protect checks first,
// from their bodies, because the specification wants a 403 with a
// WWW-Authenticate challenge a client can step up from, which an error
// inside a 200 answer cannot be; the middleware then finds them allowed.
func (c *Config) ToolScopesMiddleware() intercept.Middleware {
	c.scopesHeld.Store(true)
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if err := c.checkToolScopes(ctx, req); err != nil {
				return intercept.Result{}, err
			}
			return next(ctx, req)
		}
	}
}

// heldOverUpgrade reports whether Protect may let r through to the
// server: an upgrade to WebSocket carries calls Protect never sees, so
// with ToolScopes it goes through only when ToolScopesMiddleware was made
// for the server to hold them. Refusing it otherwise keeps a
// configuration that forgot the middleware from running every tool for
// any token.
func (c *Config) heldOverUpgrade(r *http.Request) bool {
	return len(c.ToolScopes) == 0 || !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || c.scopesHeld.Load()
}

// checkToolScopes returns the error of a tools/call whose tool needs
// scopes the caller in ctx lacks, nil for any other request.
func (c *Config) checkToolScopes(ctx context.Context, req *intercept.Request) error {
	if req.Method != protocol.MethodToolsCall {
		return nil
	}
	need := c.ToolScopes[req.Name()]
	if len(need) == 0 {
		return nil
	}
	var granted []string
	if caller, ok := intercept.CallerFrom(ctx); ok {
		granted = caller.Scopes
	}
	if len(c.missing(granted, need)) == 0 {
		return nil
	}
	// "servers SHOULD include all scopes required for the current
	// operation in a single challenge"
	scope := strings.Join(union(c.Scopes, need), " ")
	data, _ := json.Marshal(scopeError{metadata.ErrorInsufficientScope, scope})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Data: data,
		Message: "insufficient_scope: the token lacks scopes this tool needs (" + scope + ")"}
}

// scopeError is the data of the error: the challenge's error and scope.
type scopeError struct {
	Error string `json:"error"`
	Scope string `json:"scope"`
}
