package gateway

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// serve is the endpoint's middleware: the requests about tools, prompts,
// resources and completion go to the upstream servers; the rest
// (initialize, ping, logging/setLevel, server/discover) the endpoint's own
// server answers.
func (f *front) serve(next intercept.Handler) intercept.Handler {
	return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
		req := server.RequestOf(ir)
		if req == nil {
			return next(ctx, ir)
		}
		switch req.Method {
		case protocol.MethodToolsList:
			return served(page(f, req, f.toolCatalog(ctx, req), func(items []protocol.Tool, next string) any {
				return &protocol.ListToolsResult{Tools: items, NextCursor: next}
			}))
		case protocol.MethodPromptsList:
			return served(page(f, req, f.promptCatalog(ctx, req), func(items []protocol.Prompt, next string) any {
				return &protocol.ListPromptsResult{Prompts: items, NextCursor: next}
			}))
		case protocol.MethodResourcesList:
			return served(page(f, req, f.resourceCatalog(ctx, req), func(items []protocol.Resource, next string) any {
				return &protocol.ListResourcesResult{Resources: items, NextCursor: next}
			}))
		case protocol.MethodResourcesTemplatesList:
			return served(page(f, req, f.templateCatalog(ctx, req), func(items []protocol.ResourceTemplate, next string) any {
				return &protocol.ListResourceTemplatesResult{ResourceTemplates: items, NextCursor: next}
			}))
		case protocol.MethodToolsCall:
			return f.callTool(ctx, req)
		case protocol.MethodPromptsGet:
			return served(f.getPrompt(ctx, req))
		case protocol.MethodResourcesRead:
			return served(f.readResource(ctx, req))
		case protocol.MethodComplete:
			return served(f.complete(ctx, req))
		case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
			return f.subscribe(ctx, ir, next)
		case protocol.MethodSubscriptionsListen:
			return f.listen(ctx, ir, next)
		case skills.MethodList, skills.MethodGet, skills.MethodReadDirectory:
			return served(f.skillsMethod(ctx, req))
		}
		if isTasksMethod(req.Method) {
			return served(f.tasksMethod(ctx, req))
		}
		return next(ctx, ir)
	}
}

// served is a listing's result as middleware sees it.
func served(v any, err error) (intercept.Result, error) {
	return intercept.Result{Value: v}, err
}

// decode decodes a request's params.
func decode(req *server.Request, out any) error {
	if len(req.Params()) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params(), out); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func errUnknown(kind, name string) error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown %s %q", kind, name)
}

// passMeta is the part of a client's _meta that goes upstream: what the
// protocol puts there (the stateless request fields, the progress token)
// the gateway's own client writes for its side; the rest (trace context,
// the application's own members) passes.
func passMeta(m protocol.Meta) protocol.Meta {
	var out protocol.Meta
	for k, v := range m {
		if k == protocol.MetaProgressToken || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if out == nil {
			out = make(protocol.Meta, len(m))
		}
		out[k] = v
	}
	return out
}

// mayAsk reports whether a request of this method may make the server
// ask its client something.
func mayAsk(method string) bool {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead:
		return true
	}
	return false
}

// forward runs a request upstream on l, about what k names (the server's
// name for it). A stateless client's request that may ask its client
// something runs as a pending request, answered over as many rounds as
// the server has questions. What the gateway's clients send is observed
// by their own middleware (Options.ClientOptions).
func (f *front) forward(ctx context.Context, req *server.Request, l *link, k kind, mrtr protocol.MRTRParams,
	run func(ctx context.Context, c *client.Client) (intercept.Result, error)) (intercept.Result, error) {
	if !req.Stateless() || !mayAsk(req.Method) {
		return f.invoke(ctx, ctx, req, l, k, nil, run)
	}
	g := f.g
	what := k.method + " " + k.name
	var p *pending
	var err error
	// A pending request's result is an intercept.Result, which wait
	// returns as it is; a round that asks the client is answered with an
	// input_required result of the pending's own.
	if mrtr.RequestState != "" {
		p, err = g.pending.resume(ctx, what, mrtr.RequestState, mrtr.InputResponses)
	} else {
		p, err = g.pending.start(ctx, what, func(pctx context.Context, p *pending) (any, error) {
			return f.invoke(pctx, pctx, req, l, k, p, run)
		})
	}
	if err != nil {
		return intercept.Result{}, err
	}
	v, err := p.wait(ctx)
	if res, ok := v.(intercept.Result); ok || err != nil {
		return res, err
	}
	return intercept.Result{Value: v}, nil
}

// forwardValue is forward for a request whose result is decoded: its
// value is all there is to it.
func (f *front) forwardValue(ctx context.Context, req *server.Request, l *link, k kind, mrtr protocol.MRTRParams,
	run func(ctx context.Context, c *client.Client) (any, error)) (any, error) {
	res, err := f.forward(ctx, req, l, k, mrtr, func(ctx context.Context, c *client.Client) (intercept.Result, error) {
		v, err := run(ctx, c)
		return intercept.Result{Value: v}, err
	})
	return res.Value, err
}

// invoke makes one upstream call on l for req: callCtx bounds it, and
// reqCtx is the client request's (where progress goes).
func (f *front) invoke(callCtx, reqCtx context.Context, req *server.Request, l *link, k kind, p *pending,
	run func(ctx context.Context, c *client.Client) (intercept.Result, error)) (intercept.Result, error) {
	defer l.use()()
	c, err := l.client(callCtx)
	if err != nil {
		return intercept.Result{}, err
	}
	cl := &call{Context: callCtx, req: req, kind: k, pend: p}
	if err := l.begin(cl, c.Stateless()); err != nil {
		return intercept.Result{}, err
	}
	var ctx context.Context = cl
	if hasProgress(req) {
		ctx = client.WithProgress(ctx, func(pp *protocol.ProgressParams) {
			req.Progress(reqCtx, pp.Progress, pp.Total, pp.Message)
		})
	}
	res, err := resend(ctx, l, c, run)
	l.end(cl, err == nil)
	if err != nil {
		return intercept.Result{}, upstreamError(l.up.name, err)
	}
	return res, nil
}

// hasProgress reports whether the client asked for progress.
func hasProgress(req *server.Request) bool {
	if len(req.RawMeta) == 0 || !strings.Contains(string(req.RawMeta), protocol.MetaProgressToken) {
		return false
	}
	_, ok := req.Meta()[protocol.MetaProgressToken]
	return ok
}

// result adapts an upstream result for the client's era: the upstream's
// identity and result type are the gateway's business, not the client's.
func result(req *server.Request, rf *protocol.ResultFields) {
	rf.ResultType = ""
	if _, ok := rf.Meta[protocol.MetaServerInfo]; ok {
		m := make(protocol.Meta, len(rf.Meta))
		for k, v := range rf.Meta {
			if k != protocol.MetaServerInfo {
				m[k] = v
			}
		}
		rf.Meta = m
	}
}

// callTool forwards a tools/call. Its result says whether it is a tool
// error, as passResult found on its way through it, so that middleware
// (observe's) need not walk a 64 KiB result again to count it.
func (f *front) callTool(ctx context.Context, req *server.Request) (intercept.Result, error) {
	p, err := toolCall(req)
	if err != nil {
		return intercept.Result{}, err
	}
	if f.vw != nil {
		if p.Arguments, err = f.vw.toolArguments(p.Name, p.Arguments); err != nil {
			return intercept.Result{}, err
		}
	}
	r, err := resolve(f, ctx, req, "tool", p.Name, (*front).toolCatalog)
	if err != nil {
		return intercept.Result{}, err
	}
	l, err := r.up.linkFor(ctx, req)
	if err != nil {
		return intercept.Result{}, err
	}
	if ask, err := f.taskWanted(ctx, req, p.Name); ask != nil || err != nil {
		if err != nil {
			return intercept.Result{}, err
		}
		return f.startTask(ctx, req, p, r, l, ask)
	}
	return f.forward(ctx, req, l, kind{req.Method, r.name}, p.MRTRParams, func(ctx context.Context, c *client.Client) (intercept.Result, error) {
		params := &protocol.CallToolParams{Name: r.name, Arguments: p.Arguments, Meta: p.Meta}
		up, err := c.CallToolRaw(ctx, params)
		if err != nil {
			return intercept.Result{}, err
		}
		raw, _ := up.Value.(jsontext.Value)
		if !req.Stateless() || !mayAsk(req.Method) {
			// The arguments, which alias the request's body (and may be
			// written upstream from it, uncopied, within the call:
			// CallToolRaw's promise, that they do not change until it
			// returns, holds since the body is lent only here), were
			// written before the answer came, and the call ran within the
			// request: the transport may read the next request into that
			// body. (A stateless request that may ask runs apart from its
			// client request, which may end first.)
			req.Lend()
		}
		// The result goes on undecoded (passResult); the rare one it
		// cannot splice is decoded and adapted.
		if out, isError, ok := f.passResult(req, raw); ok {
			return lent(req, intercept.Result{Value: out, IsError: isError}, up), nil
		}
		res := &protocol.CallToolResult{}
		err = json.Unmarshal(raw, res) // which copies what it keeps
		release(up)
		if err != nil {
			return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %q: invalid tools/call result: %v", l.up.name, err)
		}
		result(req, &res.ResultFields)
		if !req.Stateless() && !protocol.AtLeast(req.ProtocolVersion, protocol.Version20250618) {
			res.StructuredContent = nil
		}
		return intercept.Result{Value: res, IsError: res.IsError}, nil
	})
}

func (f *front) getPrompt(ctx context.Context, req *server.Request) (any, error) {
	var p protocol.GetPromptParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if f.vw != nil {
		var err error
		if p.Arguments, err = f.vw.promptArguments(p.Name, p.Arguments); err != nil {
			return nil, err
		}
	}
	r, err := resolve(f, ctx, req, "prompt", p.Name, (*front).promptCatalog)
	if err != nil {
		return nil, err
	}
	l, err := r.up.linkFor(ctx, req)
	if err != nil {
		return nil, err
	}
	return f.forwardValue(ctx, req, l, kind{req.Method, r.name}, p.MRTRParams, func(ctx context.Context, c *client.Client) (any, error) {
		res, err := c.GetPromptWith(ctx, &protocol.GetPromptParams{Name: r.name, Arguments: p.Arguments, Meta: passMeta(p.Meta)})
		if err != nil {
			return nil, err
		}
		result(req, &res.ResultFields)
		return res, nil
	})
}

// owner finds the upstream of a resource: the one that lists it, else the
// one with a template that matches it, else, when only one upstream has
// resources, that one.
func (f *front) owner(ctx context.Context, req *server.Request, uri string) (*upstream, error) {
	if u := f.resourceCatalog(ctx, req).owners[uri]; u != nil {
		return u, nil
	}
	tc := f.templateCatalog(ctx, req)
	for _, t := range tc.templates {
		if t.compiled.Match(uri) != nil {
			return t.up, nil
		}
	}
	var found *upstream
	n := 0
	for _, u := range f.upstreams() {
		l, err := u.listLink(ctx, req)
		if err != nil {
			continue
		}
		if c, err := l.client(ctx); err == nil && c.ServerCapabilities().Resources != nil {
			found = u
			n++
		}
	}
	if n == 1 {
		return found, nil
	}
	return nil, notFound(req, uri)
}

// notFound is the error for an unknown resource in the client's era.
func notFound(req *server.Request, uri string) error {
	code := int64(protocol.CodeResourceNotFound)
	if req.Stateless() {
		code = jsonrpc.CodeInvalidParams
	}
	e := jsonrpc.NewError(code, "resource not found: %s", uri)
	e.Data, _ = json.Marshal(map[string]string{"uri": uri})
	return e
}

func (f *front) readResource(ctx context.Context, req *server.Request) (any, error) {
	var p protocol.ReadResourceParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	u, upURI, err := f.resourceRoute(ctx, req, p.URI)
	if err != nil {
		return nil, err
	}
	l, err := u.linkFor(ctx, req)
	if err != nil {
		return nil, err
	}
	return f.forwardValue(ctx, req, l, kind{req.Method, upURI}, p.MRTRParams, func(ctx context.Context, c *client.Client) (any, error) {
		res, err := c.ReadResourceWith(ctx, &protocol.ReadResourceParams{URI: upURI, Meta: passMeta(p.Meta)})
		if err != nil {
			return nil, err
		}
		result(req, &res.ResultFields)
		res.CacheFields = protocol.CacheFields{}
		for i := range res.Contents {
			res.Contents[i].URI = f.outward(u, res.Contents[i].URI)
		}
		return res, nil
	})
}

// complete routes completion/complete by its reference: a prompt to the
// server that has it (by the server's name for it), a resource template
// to the server that lists it.
func (f *front) complete(ctx context.Context, req *server.Request) (any, error) {
	var p protocol.CompleteParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	if f.vw != nil {
		if err := f.vw.completion(&p); err != nil {
			return nil, err
		}
	}
	var u *upstream
	switch p.Ref.Type {
	case protocol.RefPrompt:
		r, err := resolve(f, ctx, req, "prompt", p.Ref.Name, (*front).promptCatalog)
		if err != nil {
			return nil, err
		}
		u, p.Ref.Name = r.up, r.name
	case protocol.RefResource, "ref/resource-template":
		u = f.templateCatalog(ctx, req).owners[p.Ref.URI]
		if u == nil {
			u = f.resourceCatalog(ctx, req).owners[p.Ref.URI]
		}
		if u == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown resource template %q", p.Ref.URI)
		}
	default:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown reference type %q", p.Ref.Type)
	}
	l, err := u.linkFor(ctx, req)
	if err != nil {
		return nil, err
	}
	p.Meta = passMeta(p.Meta)
	return f.forwardValue(ctx, req, l, kind{req.Method, p.Ref.Name + p.Ref.URI}, protocol.MRTRParams{}, func(ctx context.Context, c *client.Client) (any, error) {
		if c.ServerCapabilities().Completions == nil {
			return &protocol.CompleteResult{Completion: protocol.Completion{Values: []string{}}}, nil
		}
		res, err := c.Complete(ctx, &p)
		if err != nil {
			return nil, err
		}
		result(req, &res.ResultFields)
		return res, nil
	})
}

// subscribe serves resources/subscribe and resources/unsubscribe of a
// legacy session: the session's subscription is the endpoint's own
// server's to keep (it filters the updates it sends), and the gateway
// subscribes upstream for as long as one of its clients is subscribed.
func (f *front) subscribe(ctx context.Context, ir *intercept.Request, next intercept.Handler) (intercept.Result, error) {
	req := server.RequestOf(ir)
	var p protocol.SubscribeParams
	if err := decode(req, &p); err != nil {
		return intercept.Result{}, err
	}
	if req.Method == protocol.MethodResourcesUnsubscribe {
		f.subs.drop(req.Session, p.URI)
		return next(ctx, ir)
	}
	u, upURI, err := f.resourceRoute(ctx, req, p.URI)
	if err != nil {
		return intercept.Result{}, err
	}
	if f.subs.has(req.Session, p.URI) {
		return next(ctx, ir)
	}
	l, err := u.subscribe(ctx, req, upURI)
	if err != nil {
		return intercept.Result{}, err
	}
	res, err := next(ctx, ir)
	if err != nil {
		l.unsubscribe(upURI)
		return intercept.Result{}, err
	}
	f.subs.add(f.g, req.Session, p.URI, upstreamSub{l, upURI})
	return res, nil
}

// listen serves a stateless client's subscriptions/listen: the resources
// it names are subscribed to upstream while the stream lasts.
func (f *front) listen(ctx context.Context, ir *intercept.Request, next intercept.Handler) (intercept.Result, error) {
	req := server.RequestOf(ir)
	var p protocol.SubscriptionsListenParams
	if err := decode(req, &p); err != nil {
		return intercept.Result{}, err
	}
	for _, uri := range p.Notifications.ResourceSubscriptions {
		u, upURI, err := f.resourceRoute(ctx, req, uri)
		if err != nil {
			continue // the stream still carries what else it asked for
		}
		l, err := u.subscribe(ctx, req, upURI)
		if err != nil {
			f.g.log.Warn("gateway: subscribing upstream failed", "server", u.name, "uri", upURI, "error", err)
			continue
		}
		defer l.unsubscribe(upURI)
	}
	return next(ctx, ir)
}
