package access

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/skills"
)

// Live is the policy in force, which a reload of the configuration swaps
// ([Live.Set]) while calls go on: each request is decided by the policy
// in force when it came.
type Live struct {
	p atomic.Pointer[Policy]
}

// NewLive returns p in force.
func NewLive(p *Policy) *Live {
	l := &Live{}
	l.Set(p)
	return l
}

// Set puts p in force (nil allows everything).
func (l *Live) Set(p *Policy) {
	if p == nil {
		p = &Policy{}
	}
	l.p.Store(p)
}

// Policy returns the policy in force.
func (l *Live) Policy() *Policy { return l.p.Load() }

// Middleware returns the gateway middleware ([gateway.Options].Middleware)
// that holds the policy in force on every endpoint: a tools/call,
// prompts/get, resources/read, resources/subscribe (or a stateless
// client's subscriptions/listen to a resource), completion/complete
// (of a prompt's or a template's arguments), skills/get or
// resources/directory/read (a skill's files are resources) the policy
// refuses is answered with an error naming the rule ([Refusal]), and the lists
// of tools, prompts, resources, templates and skills show only what the
// caller may use. Tools and prompts are decided by their qualified name
// (SERVER__NAME, whichever endpoint shows them) and, through a view, by
// VIEW:NAME too; resources by the URI the endpoint shows.
func (l *Live) Middleware() intercept.Middleware {
	return func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
			switch ir.Method {
			case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead,
				protocol.MethodResourcesSubscribe:
				if err := l.check(ctx, ir); err != nil {
					return intercept.Result{}, err
				}
			case protocol.MethodComplete:
				if err := l.checkCompletion(ctx, ir); err != nil {
					return intercept.Result{}, err
				}
			case protocol.MethodSubscriptionsListen:
				if err := l.checkListen(ir); err != nil {
					return intercept.Result{}, err
				}
			case skills.MethodGet, skills.MethodReadDirectory:
				if err := l.checkURI(ir); err != nil {
					return intercept.Result{}, err
				}
			case skills.MethodList:
				res, err := next(ctx, ir)
				if err != nil {
					return res, err
				}
				return l.filterSkills(ir, res)
			case protocol.MethodToolsList, protocol.MethodPromptsList, protocol.MethodResourcesList,
				protocol.MethodResourcesTemplatesList:
				res, err := next(ctx, ir)
				if err != nil {
					return res, err
				}
				return l.filter(ctx, ir, res)
			}
			return next(ctx, ir)
		}
	}
}

// check returns the refusal of a call the policy refuses.
func (l *Live) check(ctx context.Context, ir *intercept.Request) error {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return nil
	}
	k := kindOfMethod(ir.Method)
	name := ir.Name()
	t := namer(ctx, ir, k)(name)
	d := p.Decide(ir.Caller(), t)
	if d.Allowed {
		return nil
	}
	return refusal(d, ir.Method, name)
}

// checkCompletion returns the refusal of a completion/complete whose
// prompt or resource template the caller may not use: completing its
// arguments would use it, and tell what it holds.
func (l *Live) checkCompletion(ctx context.Context, ir *intercept.Request) error {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return nil
	}
	var params protocol.CompleteParams
	raw, _ := ir.Params.(jsontext.Value)
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil // the server refuses what it cannot read
	}
	k, name := Prompt, params.Ref.Name
	if params.Ref.Type != protocol.RefPrompt {
		k, name = Resource, params.Ref.URI
	}
	d := p.Decide(ir.Caller(), namer(ctx, ir, k)(name))
	if d.Allowed {
		return nil
	}
	return refusal(d, ir.Method, name)
}

// checkURI returns the refusal of a skills/get or
// resources/directory/read of a URI the caller may not read: a skill's
// files are resources, decided by their URIs.
func (l *Live) checkURI(ir *intercept.Request) error {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return nil
	}
	var params struct {
		URI string `json:"uri"`
	}
	raw, _ := ir.Params.(jsontext.Value)
	if json.Unmarshal(raw, &params) != nil {
		return nil // the server refuses what it cannot read
	}
	if d := p.Decide(ir.Caller(), Target{Kind: Resource, Name: params.URI}); !d.Allowed {
		return refusal(d, ir.Method, params.URI)
	}
	return nil
}

// checkListen returns the refusal of a stateless client's
// subscriptions/listen that names a resource the caller may not read:
// its updates would tell when it changes.
func (l *Live) checkListen(ir *intercept.Request) error {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return nil
	}
	var params protocol.SubscriptionsListenParams
	raw, _ := ir.Params.(jsontext.Value)
	if json.Unmarshal(raw, &params) != nil {
		return nil // the server refuses what it cannot read
	}
	c := ir.Caller()
	for _, uri := range params.Notifications.ResourceSubscriptions {
		if d := p.Decide(c, Target{Kind: Resource, Name: uri}); !d.Allowed {
			return refusal(d, ir.Method, uri)
		}
	}
	return nil
}

// filterSkills leaves in a skills/list result the skills whose SKILL.md
// the caller may read.
func (l *Live) filterSkills(ir *intercept.Request, res intercept.Result) (intercept.Result, error) {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return res, nil
	}
	v, ok := res.Value.(*skills.ListResult)
	if !ok {
		return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "access: cannot filter a %s result of type %T", ir.Method, res.Value)
	}
	c := ir.Caller()
	v.Skills = slices.DeleteFunc(slices.Clone(v.Skills), func(s skills.Skill) bool {
		return !p.Visible(c, Target{Kind: Resource, Name: s.URI})
	})
	return res, nil
}

func kindOfMethod(method string) Kind {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodToolsList:
		return Tool
	case protocol.MethodPromptsGet, protocol.MethodPromptsList:
		return Prompt
	}
	return Resource
}

// namer returns what names the targets of the endpoint of ir: a tool or
// prompt by the server behind it and the server's name for it, and by
// its view's name for it; a resource by the URI the endpoint shows.
func namer(ctx context.Context, ir *intercept.Request, k Kind) func(name string) Target {
	ep := gateway.EndpointOf(ctx)
	if k == Resource || ep == nil {
		return func(name string) Target { return Target{Kind: k, Name: name} }
	}
	method := protocol.MethodToolsCall
	if k == Prompt {
		method = protocol.MethodPromptsGet
	}
	resolve := ep.Resolver(ctx, ir, method)
	sep := ep.Separator()
	return func(name string) Target {
		t := Target{Kind: k, Name: name}
		if server, upName, ok := resolve(name); ok {
			t.Name = server + sep + upName
		}
		if ep.View != "" {
			t.Alias = ep.View + ":" + name
		}
		return t
	}
}

// filter leaves in a list's result only what the caller may use.
func (l *Live) filter(ctx context.Context, ir *intercept.Request, res intercept.Result) (intercept.Result, error) {
	p := l.Policy()
	if len(p.rules) == 0 && !p.deny {
		return res, nil
	}
	c := ir.Caller()
	name := namer(ctx, ir, kindOfMethod(ir.Method))
	visible := func(n string) bool { return p.Visible(c, name(n)) }
	switch v := res.Value.(type) {
	case *protocol.ListToolsResult:
		v.Tools = slices.DeleteFunc(slices.Clone(v.Tools), func(t protocol.Tool) bool { return !visible(t.Name) })
	case *protocol.ListPromptsResult:
		v.Prompts = slices.DeleteFunc(slices.Clone(v.Prompts), func(x protocol.Prompt) bool { return !visible(x.Name) })
	case *protocol.ListResourcesResult:
		v.Resources = slices.DeleteFunc(slices.Clone(v.Resources), func(x protocol.Resource) bool { return !visible(x.URI) })
	case *protocol.ListResourceTemplatesResult:
		v.ResourceTemplates = slices.DeleteFunc(slices.Clone(v.ResourceTemplates), func(x protocol.ResourceTemplate) bool { return !visible(x.URITemplate) })
	default:
		// A list this middleware cannot read is not shown rather than
		// shown whole.
		if res.Release != nil {
			res.Release()
		}
		return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "access: cannot filter a %s result of type %T", ir.Method, res.Value)
	}
	return res, nil
}

// Refusal is the error of a request the access rules refuse: a JSON-RPC
// error (-32600) whose message and data name the rule that refused it,
// or, when scopes the caller lacks would allow it, say so as
// auth/resourceserver's insufficient_scope errors do ({"error":
// "insufficient_scope", "scope": "..."}).
type Refusal struct {
	// Rule is the index of the rule in the access section's rules, -1
	// for the default; Description is its description.
	Rule        int
	Description string
	// Scopes, when not empty, would allow the request.
	Scopes []string
	rpc    *jsonrpc.Error
}

func (r *Refusal) Error() string { return r.rpc.Message }

// Unwrap gives the server the JSON-RPC error to answer.
func (r *Refusal) Unwrap() error { return r.rpc }

// RefusedBy names the rule that refused, as an audit record says it.
func (r *Refusal) RefusedBy() string {
	if r.Rule < 0 {
		return "default"
	}
	return fmt.Sprintf("rule %d", r.Rule)
}

func refusal(d Decision, method, name string) *Refusal {
	r := &Refusal{Rule: d.Rule, Description: d.Description, Scopes: d.MissingScopes}
	who := "the default (deny)"
	if d.Rule >= 0 {
		who = fmt.Sprintf("access rule %d", d.Rule)
		if d.Description != "" {
			who += fmt.Sprintf(" (%s)", d.Description)
		}
	}
	msg := fmt.Sprintf("%s refuses %s of %q", who, method, name)
	data := map[string]any{"error": "forbidden", "rule": d.Rule, "description": d.Description}
	if len(d.MissingScopes) > 0 {
		scope := strings.Join(d.MissingScopes, " ")
		msg = fmt.Sprintf("insufficient_scope: %s of %q needs scopes the token lacks (%s)", method, name, scope)
		data = map[string]any{"error": "insufficient_scope", "scope": scope}
	}
	raw, _ := json.Marshal(data)
	r.rpc = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg, Data: raw}
	return r
}
