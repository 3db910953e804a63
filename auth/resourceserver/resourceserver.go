// Package resourceserver makes an MCP server an OAuth protected resource
// (an OAuth 2.1 resource server, as the MCP specification's
// authorization profile describes it): Config.Protect wraps the server's
// HTTP handler (streamablehandler.Handler, ssehandler.Handler) in a
// middleware that
//
//   - takes the bearer token of each request and has a Verifier check it:
//     a JWT access token (RFC 9068) against the authorization server's
//     keys, with its issuer, its audience (this resource, RFC 8707: a
//     token issued for another server is refused) and its expiry; or an
//     opaque token by introspection (RFC 7662);
//   - answers a request without a valid token with 401 and the
//     WWW-Authenticate challenge the specification asks for, which names
//     the resource's metadata and the scopes needed (400 invalid_request
//     for an Authorization header that cannot be read);
//   - answers a call to a tool that needs scopes the token lacks with 403
//     insufficient_scope, naming every scope the call needs (ToolScopes;
//     Config.ToolScopesMiddleware holds them for the calls that do not
//     come one by one over HTTP, the messages of a WebSocket connection);
//   - binds a legacy session to the caller who opened it;
//   - gives the handler who is calling (intercept.CallerFrom), and never the token
//     itself: the Authorization header is removed before the handler runs,
//     since a server must not pass a client's token on to another service.
//
// Config.Metadata serves the Protected Resource Metadata (RFC 9728) that
// clients discover the authorization server from, at the address
// MetadataPath returns.
package resourceserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
)

// Config describes a protected MCP server.
type Config struct {
	// Resource is the server's resource identifier: its canonical URL as
	// clients reach it, e.g. "https://mcp.example.com/mcp". Tokens must be
	// issued for it (their audience). Required.
	Resource string
	// AuthorizationServers are the issuer identifiers of the
	// authorization servers whose tokens the server accepts, published
	// in its metadata. At least one is required.
	AuthorizationServers []string
	// Verifier checks tokens. Required.
	Verifier Verifier
	// ScopesSupported are published in the metadata: the scopes a client
	// asks for when nothing else tells it which. Empty means Scopes.
	ScopesSupported []string
	// Scopes are needed for every request.
	Scopes []string
	// ToolScopes are needed, beside Scopes, to call the named tools.
	// Protect holds them for the calls of POSTs (Streamable HTTP,
	// HTTP+SSE); a server reached over WebSocket, whose calls are
	// messages of one connection, holds them with ToolScopesMiddleware.
	ToolScopes map[string][]string
	// ToolScopesFunc, when set, adds to ToolScopes the scopes a call of
	// tool by caller needs on the POST r, when they depend on more than
	// the tool's name: on the endpoint (r's path) and on who calls, as a
	// gateway's access rules do. Protect holds them as it holds
	// ToolScopes, with a 403 a client can step up from; ToolScopesMiddleware
	// does not (the server's own middleware holds such rules for the
	// calls Protect does not see one by one).
	ToolScopesFunc func(r *http.Request, caller *intercept.Caller, tool string) []string
	// Implies says which scopes a broader scope grants, e.g.
	// {"files:admin": {"files:write", "files:read"}}: a token granted
	// files:admin may call a tool that needs files:read. It is followed
	// transitively.
	Implies map[string][]string
	// ResourceName and ResourceDocumentation are published in the
	// metadata, for people.
	ResourceName          string
	ResourceDocumentation string
	// MaxBodyBytes bounds the body read to find the tool a legacy
	// request calls, when ToolScopes is set (default 16 MiB, the
	// transports' default limit).
	MaxBodyBytes int64
	// Logger receives diagnostics, never a token. Nil discards them.
	Logger *slog.Logger

	once     sync.Once
	initErr  error
	metaURL  string
	metaPath string
	sessions sessionOwners
	// scopesHeld is set once ToolScopesMiddleware was made: the server
	// holds ToolScopes for calls that do not cross Protect.
	scopesHeld atomic.Bool
}

// ErrInvalidToken is wrapped by a Verifier's error for a token that must
// be refused (expired, for another audience, badly signed): the request
// gets 401 invalid_token. Other errors (the authorization server cannot
// be reached) get 503.
var ErrInvalidToken = errors.New("invalid token")

// A Verifier checks an access token presented to the resource whose
// identifier is audience, and says who presented it.
type Verifier interface {
	// Verify returns the caller; its ID may be left empty, for Protect
	// to name the caller by its issuer and subject (or client).
	Verify(ctx context.Context, token, audience string) (*intercept.Caller, error)
}

func (c *Config) init() error {
	c.once.Do(func() {
		switch {
		case c.Verifier == nil:
			c.initErr = errors.New("resourceserver: no Verifier")
		case len(c.AuthorizationServers) == 0:
			c.initErr = errors.New("resourceserver: no AuthorizationServers")
		}
		if c.initErr != nil {
			return
		}
		if c.metaURL, c.initErr = metadata.ProtectedResourceURL(c.Resource); c.initErr != nil {
			return
		}
		c.metaPath, c.initErr = metadata.ProtectedResourcePath(c.Resource)
	})
	return c.initErr
}

// MetadataPath returns the path at which the metadata is served: the
// well-known suffix followed by the resource's path (RFC 9728 §3.1),
// e.g. "/.well-known/oauth-protected-resource/mcp".
func (c *Config) MetadataPath() string {
	c.init()
	return c.metaPath
}

// MetadataURL returns the absolute address of the metadata, which the
// challenges name.
func (c *Config) MetadataURL() string {
	c.init()
	return c.metaURL
}

// Document returns the Protected Resource Metadata of the server.
func (c *Config) Document() *metadata.ProtectedResource {
	scopes := c.ScopesSupported
	if len(scopes) == 0 {
		scopes = c.Scopes
	}
	return &metadata.ProtectedResource{
		Resource:               c.Resource,
		AuthorizationServers:   c.AuthorizationServers,
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           c.ResourceName,
		ResourceDocumentation:  c.ResourceDocumentation,
	}
}

// Metadata returns a handler that serves the Protected Resource
// Metadata, to be mounted at MetadataPath. Browsers may read it from any
// origin (a web client discovers the authorization server from it).
func (c *Config) Metadata() http.Handler {
	if err := c.init(); err != nil {
		panic(err)
	}
	body, err := json.Marshal(c.Document())
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(body)
	})
}

// Mount registers the protected handler h at pattern and the metadata at
// MetadataPath on mux.
func (c *Config) Mount(mux *http.ServeMux, pattern string, h http.Handler) {
	mux.Handle(pattern, c.Protect(h))
	mux.Handle(c.MetadataPath(), c.Metadata())
}

func (c *Config) log() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// challenge writes a refusal: status, and the Bearer challenge with the
// given error (none for a request without a token), the scopes needed
// and the metadata's address.
func (c *Config) challenge(w http.ResponseWriter, status int, code, description string, scopes []string) {
	ch := metadata.Challenge{Scheme: "Bearer", Params: map[string]string{metadata.ParamResourceMetadata: c.metaURL}}
	if code != "" {
		ch.Params[metadata.ParamError] = code
	}
	if description != "" {
		ch.Params[metadata.ParamErrorDescription] = description
	}
	if len(scopes) > 0 {
		ch.Params[metadata.ParamScope] = strings.Join(scopes, " ")
	}
	w.Header().Set("WWW-Authenticate", ch.String(metadata.ParamError, metadata.ParamScope, metadata.ParamResourceMetadata, metadata.ParamErrorDescription))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]string{"error": firstOf(code, "unauthorized")}
	if description != "" {
		body["error_description"] = description
	}
	json.MarshalWrite(w, body)
}
