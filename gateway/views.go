package gateway

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// A view's endpoint (/views/NAME/mcp, /views/NAME/sse) is a front of its
// own, with sessions of its own, whose catalogs are the aggregated
// endpoint's seen through the view: only what the view names, under the
// view's names, each routed where the aggregated endpoint routes it. So
// everything the aggregated endpoint does (both eras, progress,
// questions to the client, subscriptions, per-client processes) a view
// does too, and the middleware that resolves a name on an endpoint
// (EndpointOf) gets the server's own name on a view as on /mcp.

// viewEndpoint is what a view's front has beside a front's own: the
// view's definition, swapped whole when the configuration is read again
// (SetViews), the sessions kept.
type viewEndpoint struct {
	name string
	def  atomic.Pointer[view.View]

	mu     sync.Mutex
	warned map[string]string // the items last said missing, by kind (warnMissing)
}

// viewFronts are the endpoints of the gateway's views.
type viewFronts struct {
	mu     sync.RWMutex
	fronts map[string]*front
	order  []*front // the configuration's order
	closed bool     // by Close: no view is served again
}

// SetViews makes the gateway serve the views of set (nil for none) at
// /views/NAME/mcp and /views/NAME/sse, in place of those it served:
// a view whose name stays keeps its sessions, which are told that its
// lists changed; a view that is gone ends its sessions. After Close it
// does nothing. It is how
// [Options].Views is applied, and how a reloaded configuration's views
// (view.New) are swapped in.
func (g *Gateway) SetViews(set *view.Set) {
	g.viewSet.mu.Lock()
	if g.viewSet.closed {
		g.viewSet.mu.Unlock()
		return
	}
	old := g.viewSet.fronts
	fronts := make(map[string]*front, len(set.Names()))
	var order []*front
	for _, name := range set.Names() {
		f := old[name]
		if f == nil {
			f = newViewFront(g, name)
		}
		f.vw.def.Store(set.Get(name))
		fronts[name] = f
		order = append(order, f)
	}
	g.viewSet.fronts, g.viewSet.order = fronts, order
	g.viewSet.mu.Unlock()
	for name, f := range old {
		if fronts[name] == nil {
			f.close()
		}
	}
	g.changed()
	for _, m := range listChanges {
		g.notifyViews(m)
	}
}

// listChanges are the notifications of changed lists.
var listChanges = []string{protocol.NotificationToolsListChanged, protocol.NotificationPromptsListChanged, protocol.NotificationResourcesListChanged}

// notifyViews tells the clients of every view that a list changed: a
// view shows what its servers do.
func (g *Gateway) notifyViews(method string) {
	for _, f := range g.viewFrontList() {
		f.srv.NotifyListChanged(method)
	}
}

func newViewFront(g *Gateway, name string) *front {
	return openFront(&front{g: g, vw: &viewEndpoint{name: name}})
}

// serving is the endpoint's innermost middleware, that serves it.
func (f *front) serving() intercept.Middleware {
	if f.vw != nil {
		return f.serveView
	}
	return f.serve
}

// viewFront returns the endpoint of the view named name, or nil.
func (g *Gateway) viewFront(name string) *front {
	g.viewSet.mu.RLock()
	defer g.viewSet.mu.RUnlock()
	return g.viewSet.fronts[name]
}

// viewFrontList returns the endpoints of the views.
func (g *Gateway) viewFrontList() []*front {
	g.viewSet.mu.RLock()
	defer g.viewSet.mu.RUnlock()
	return slices.Clone(g.viewSet.order)
}

// closeViews ends the sessions of every view.
func (g *Gateway) closeViews() {
	g.viewSet.mu.Lock()
	order := g.viewSet.order
	g.viewSet.fronts, g.viewSet.order, g.viewSet.closed = nil, nil, true
	g.viewSet.mu.Unlock()
	for _, f := range order {
		f.close()
	}
}

// shows reports whether the endpoint shows anything of u, for u's log
// messages to reach its clients: every endpoint but a view does; a view
// that routes a tool, a prompt or a resource to u in the catalogs it
// last built does (a server's log may say what a client of a view that
// curates it out should not read).
func (f *front) shows(u *upstream) bool {
	if f.vw == nil {
		return true
	}
	f.views.mu.Lock()
	defer f.views.mu.Unlock()
	v := &f.views
	return v.tools != nil && routesTo(v.tools.routes, u) || v.prompts != nil && routesTo(v.prompts.routes, u) ||
		v.resources != nil && ownedBy(v.resources.owners, u) || v.templates != nil && ownedBy(v.templates.owners, u)
}

func routesTo(routes map[string]route, u *upstream) bool {
	for _, r := range routes {
		if r.up == u {
			return true
		}
	}
	return false
}

func ownedBy(owners map[string]*upstream, u *upstream) bool {
	for _, o := range owners {
		if o == u {
			return true
		}
	}
	return false
}

// viewKey carries, on the context of an HTTP request to a view's
// endpoint, the view as it was when the request came (viewRoute).
type viewKey struct{}

// viewRoute puts the view an HTTP request to /views/NAME/ is for on the
// request's context before Options.Auth sees it, for ViewTool.
func (g *Gateway) viewRoute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := g.viewFront(r.PathValue("name")); f != nil {
			r = r.WithContext(context.WithValue(r.Context(), viewKey{}, f.vw.def.Load()))
		}
		next.ServeHTTP(w, r)
	})
}

// ViewTool returns the name the aggregated endpoint (/mcp) gives the
// tool a view calls name, for r, an HTTP request to the view's endpoint
// (/views/NAME/...) as [Options].Auth gets it: so that authorization that
// decides on /mcp's names before the request is served (an access rule's
// 403 insufficient_scope, see gateway/access) decides alike on a view.
// ok is false for a request to another endpoint, and for a name the view
// does not show.
func ViewTool(r *http.Request, name string) (original string, ok bool) {
	v, _ := r.Context().Value(viewKey{}).(*view.View)
	if v == nil {
		return "", false
	}
	if it := v.Tool(name); it != nil {
		return it.Original, true
	}
	return "", false
}

// serveViewHTTP serves the endpoints of one view.
func (g *Gateway) serveViewHTTP(w http.ResponseWriter, r *http.Request) {
	f := g.viewFront(r.PathValue("name"))
	if f == nil {
		http.Error(w, "no view named "+r.PathValue("name"), http.StatusNotFound)
		return
	}
	switch r.PathValue("endpoint") {
	case "mcp":
		f.http.ServeHTTP(w, r)
	case "sse", "message":
		f.sse.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// serveView is a view's endpoint's middleware: f.serve, but for what the
// view does not show. Its catalogs (viewCatalog) keep a client to the
// view's tools and prompts; a resource is read, subscribed to or
// completed only when the view shows it, and the skills the servers
// offer are not the view's.
func (f *front) serveView(next intercept.Handler) intercept.Handler {
	serve := f.serve(next)
	return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
		req := server.RequestOf(ir)
		if req == nil {
			return serve(ctx, ir)
		}
		if err := f.vw.admit(req); err != nil {
			return intercept.Result{}, err
		}
		return serve(ctx, ir)
	}
}

// admit refuses a request about a resource the view does not show, and
// the skills extension's methods.
func (vw *viewEndpoint) admit(req *server.Request) error {
	def := vw.def.Load()
	switch req.Method {
	case protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe:
		var p protocol.ReadResourceParams
		if err := decode(req, &p); err != nil {
			return err
		}
		if !def.Readable(p.URI) {
			return notFound(req, p.URI)
		}
	case protocol.MethodSubscriptionsListen:
		var p protocol.SubscriptionsListenParams
		if err := decode(req, &p); err != nil {
			return err
		}
		for _, uri := range p.Notifications.ResourceSubscriptions {
			if !def.Readable(uri) {
				return notFound(req, uri)
			}
		}
	case protocol.MethodComplete:
		var p protocol.CompleteParams
		if err := decode(req, &p); err != nil {
			return err
		}
		if p.Ref.Type != protocol.RefPrompt && !def.CompletesTemplate(p.Ref.URI) {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown resource template %q", p.Ref.URI)
		}
	case skills.MethodList, skills.MethodGet, skills.MethodReadDirectory:
		return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s (a view offers no skills)", req.Method)
	}
	return nil
}

// toolArguments are the arguments of a call of the view's tool name:
// the client's with the view's fixed arguments, or -32602 when the client
// sends one of those. A name the view does not show is left to the
// catalog to refuse.
func (vw *viewEndpoint) toolArguments(name string, args jsontext.Value) (jsontext.Value, error) {
	if it := vw.def.Load().Tool(name); it != nil {
		return it.Arguments(args)
	}
	return args, nil
}

// promptArguments are toolArguments for a prompts/get.
func (vw *viewEndpoint) promptArguments(name string, args map[string]string) (map[string]string, error) {
	if it := vw.def.Load().Prompt(name); it != nil {
		return it.PromptArguments(args)
	}
	return args, nil
}

// completion adapts a completion/complete of the view's prompt: the
// view's fixed arguments join the context the client gives, since one
// argument's values may depend on another's (a team's members on the
// team), and completing a fixed argument is refused with -32602.
func (vw *viewEndpoint) completion(p *protocol.CompleteParams) error {
	if p.Ref.Type != protocol.RefPrompt {
		return nil
	}
	it := vw.def.Load().Prompt(p.Ref.Name)
	if it == nil {
		return nil
	}
	if err := it.Settable(p.Argument.Name); err != nil {
		return err
	}
	var sent map[string]string
	if p.Context != nil {
		sent = p.Context.Arguments
	}
	args, err := it.PromptArguments(sent)
	if err != nil || len(args) == 0 {
		return err
	}
	p.Context = &protocol.CompleteContext{Arguments: args}
	return nil
}

// The catalogs of a view's endpoint: the aggregated endpoint's (built
// for the same request, so a client with processes of its own sees its
// own), as the view shows them, routed as the aggregated endpoint routes
// the items they show.

func (f *front) viewTools(ctx context.Context, req *server.Request) *catalog[protocol.Tool] {
	return viewOf(f, ctx, req, &f.views.tools, func(ctx context.Context, req *server.Request, _ []*upstream) *catalog[protocol.Tool] {
		def := f.vw.def.Load()
		all := f.g.agg.toolCatalog(ctx, req)
		f.vw.warnMissing(f.g, "tools", all.problems, def.MissingTools(hasRoute(all.routes)))
		return viewNamed(all, def.Tools, def.Tool, func(t *protocol.Tool) string { return t.Name })
	})
}

func (f *front) viewPrompts(ctx context.Context, req *server.Request) *catalog[protocol.Prompt] {
	return viewOf(f, ctx, req, &f.views.prompts, func(ctx context.Context, req *server.Request, _ []*upstream) *catalog[protocol.Prompt] {
		def := f.vw.def.Load()
		all := f.g.agg.promptCatalog(ctx, req)
		f.vw.warnMissing(f.g, "prompts", all.problems, def.MissingPrompts(hasRoute(all.routes)))
		return viewNamed(all, def.Prompts, def.Prompt, func(p *protocol.Prompt) string { return p.Name })
	})
}

func hasRoute(routes map[string]route) func(string) bool {
	return func(name string) bool { _, ok := routes[name]; return ok }
}

// warnMissing logs, once for as long as they stay the same, the tools or
// prompts (kind) the view names that no server offers: a name misspelt
// in the configuration leaves the view without the item, silently but
// for this. Nothing is said while a server is down (problems): what it
// offers is not known.
func (vw *viewEndpoint) warnMissing(g *Gateway, kind string, problems []error, missing []string) {
	if len(problems) > 0 {
		return
	}
	said := strings.Join(missing, "\x00")
	vw.mu.Lock()
	defer vw.mu.Unlock()
	if vw.warned[kind] == said {
		return
	}
	if vw.warned == nil {
		vw.warned = map[string]string{}
	}
	vw.warned[kind] = said
	if len(missing) > 0 {
		g.log.Warn("gateway: a view names "+kind+" no server offers (as /mcp names them)", "view", vw.name, kind, missing)
	}
}

// viewNamed is the catalog of a view's tools or prompts out of all, the
// aggregated endpoint's: show picks and renames the items, item finds
// one by the view's name.
func viewNamed[T any](all *catalog[T], show func([]T) []T, item func(string) *view.Item, nameOf func(*T) string) *catalog[T] {
	c := &catalog[T]{items: show(all.items), routes: map[string]route{}, problems: all.problems}
	for i := range c.items {
		name := nameOf(&c.items[i])
		c.routes[name] = all.routes[item(name).Original]
	}
	return c
}

func (f *front) viewResources(ctx context.Context, req *server.Request) *catalog[protocol.Resource] {
	return viewOf(f, ctx, req, &f.views.resources, func(ctx context.Context, req *server.Request, _ []*upstream) *catalog[protocol.Resource] {
		all := f.g.agg.resourceCatalog(ctx, req)
		c := &catalog[protocol.Resource]{items: f.vw.def.Load().Resources(all.items), owners: map[string]*upstream{}, problems: all.problems}
		for _, r := range c.items {
			c.owners[r.URI] = all.owners[r.URI]
		}
		return c
	})
}

func (f *front) viewTemplates(ctx context.Context, req *server.Request) *catalog[protocol.ResourceTemplate] {
	return viewOf(f, ctx, req, &f.views.templates, func(ctx context.Context, req *server.Request, _ []*upstream) *catalog[protocol.ResourceTemplate] {
		def := f.vw.def.Load()
		all := f.g.agg.templateCatalog(ctx, req)
		c := &catalog[protocol.ResourceTemplate]{items: def.Templates(all.items), owners: map[string]*upstream{}, problems: all.problems}
		for _, t := range c.items {
			c.owners[t.URITemplate] = all.owners[t.URITemplate]
		}
		for _, t := range all.templates {
			if def.CompletesTemplate(t.compiled.Raw()) {
				c.templates = append(c.templates, t)
			}
		}
		return c
	})
}
