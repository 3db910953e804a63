package gateway

import (
	"context"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Endpoint is the endpoint of the gateway a client request came to, as
// middleware ([Options].Middleware) sees it through [EndpointOf]: what an
// access rule, a limit or an audit record decides on or names beside the
// caller. It resolves the names the endpoint shows to the server behind
// them and that server's own names, so that a rule written once for
// "SERVER__TOOL" holds on /mcp, on /servers/SERVER/mcp and on a view.
type Endpoint struct {
	// Server is the upstream of /servers/NAME/mcp; "" for an endpoint of
	// several servers.
	Server string
	// View is the view of /views/NAME/mcp; "" for other endpoints.
	View string

	f *front
}

type endpointKey struct{}

// EndpointOf returns the endpoint of the request whose context ctx is,
// nil outside the gateway.
func EndpointOf(ctx context.Context) *Endpoint {
	e, _ := ctx.Value(endpointKey{}).(*Endpoint)
	return e
}

// mark is an endpoint's outermost middleware: it tells the middleware
// within which endpoint the request came to.
func (f *front) mark(next intercept.Handler) intercept.Handler {
	e := f.endpoint()
	return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
		return next(context.WithValue(ctx, endpointKey{}, e), ir)
	}
}

// endpoint describes f to middleware.
func (f *front) endpoint() *Endpoint {
	e := &Endpoint{f: f}
	if f.only != nil {
		e.Server = f.only.name
	}
	if f.vw != nil {
		e.View = f.vw.name
	}
	return e
}

// A Resolver maps the names an endpoint shows (a tool's, a prompt's, a
// resource's URI) to the server behind them and the server's own name;
// ok is false for a name the endpoint does not show.
type Resolver func(name string) (server, upstreamName string, ok bool)

// Resolver returns the resolver of the tools (kind
// protocol.MethodToolsCall), prompts (protocol.MethodPromptsGet) or
// resources (protocol.MethodResourcesRead) of the endpoint, for ir, a
// request it is serving. It reads the catalog the request itself is
// served from (cached, for clients without a process of their own), once:
// call it once per request and the resolver for each name.
func (e *Endpoint) Resolver(ctx context.Context, ir *intercept.Request, kind string) Resolver {
	req := server.RequestOf(ir)
	if req == nil {
		return func(string) (string, string, bool) { return "", "", false }
	}
	f := e.f
	if f.only != nil && kind != protocol.MethodResourcesRead {
		return func(name string) (string, string, bool) { return f.only.name, name, true }
	}
	switch kind {
	case protocol.MethodToolsCall:
		return routes(f.toolCatalog(ctx, req).routes)
	case protocol.MethodPromptsGet:
		return routes(f.promptCatalog(ctx, req).routes)
	}
	return func(uri string) (string, string, bool) {
		u, upURI, err := f.resourceRoute(ctx, req, uri)
		if err != nil || u == nil {
			return "", "", false
		}
		return u.name, upURI, true
	}
}

// Separator is what joins a server's name and its own name for a tool
// or prompt in a qualified name (SERVER__TOOL).
func (e *Endpoint) Separator() string { return e.f.g.opts.Separator }

func routes(m map[string]route) Resolver {
	return func(name string) (string, string, bool) {
		r, ok := m[name]
		if !ok {
			return "", "", false
		}
		return r.up.name, r.name, true
	}
}
