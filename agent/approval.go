package agent

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/skills"
)

// Mode is how tool calls and sampling requests are approved.
type Mode string

// The approval modes.
const (
	// Ask asks the user (through [Policy.Ask]); without anyone to ask, it
	// refuses and tells the model why.
	Ask Mode = "ask"
	// Auto approves everything the allow and deny lists do not settle.
	Auto Mode = "auto"
	// Deny refuses every tool call and sampling request, whatever the
	// allow lists say.
	Deny Mode = "deny"
	// Plan runs the tools that say they are read-only (the readOnlyHint
	// annotation) without asking and refuses every other call, telling
	// the model why: the model looks and plans, and changes nothing.
	// Sampling requests and skill loads are asked for as in mode ask.
	Plan Mode = "plan"
)

// ParseMode reads "ask", "auto", "plan" or "deny".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Ask, Auto, Plan, Deny:
		return m, nil
	}
	return "", fmt.Errorf("approval must be ask, auto, plan or deny, not %q", s)
}

// Permission is the user's standing decision about a tool or all the
// tools of a server, kept for a project (see [Policy.SetPermission]).
type Permission string

// The permissions.
const (
	// Always runs the calls without asking (unless the configuration's
	// deny list or mode deny or plan refuses them).
	Always Permission = "always"
	// AskEach asks before each call, even in mode auto or when the
	// configuration's allow list names the tool.
	AskEach Permission = "ask"
	// Never refuses the calls, whatever the mode and the allow list.
	Never Permission = "never"
)

// ParsePermission reads "always", "ask" or "never".
func ParsePermission(s string) (Permission, error) {
	switch p := Permission(s); p {
	case Always, AskEach, Never:
		return p, nil
	}
	return "", fmt.Errorf("a permission is always, ask or never, not %q", s)
}

// Policy decides which tool calls run and which sampling requests the
// model answers. Mode deny refuses them all; otherwise the lists apply
// first, deny before allow, then the mode.
// Its methods are safe for concurrent use.
type Policy struct {
	Mode Mode
	// Allow and Deny hold tool names in the host's list (server__tool)
	// or path.Match patterns of them ("memory__read_*", "*__delete*").
	Allow, Deny []string
	// SamplingAllow and SamplingDeny hold names (or patterns) of servers
	// whose sampling requests are answered, or refused, without asking.
	SamplingAllow, SamplingDeny []string
	// Ask asks the user; nil means there is no one to ask.
	Ask func(ctx context.Context, q *Question) (Answer, error)

	mu      sync.Mutex
	session map[string]bool // tools allowed for the rest of the session
	// skills are the skills allowed for the rest of the session, by
	// server, URI and the digests of their files (an approval binds to
	// the content it was given for).
	skills map[string]bool
	// grants are the skills' allowed-tools the user granted.
	grants []toolGrant
	// permissions are the user's standing decisions, by tool name in
	// the host's list (server__tool) or by server name.
	permissions map[string]Permission
}

// SetPermission sets the permission of target, a tool's name in the
// host's list (server__tool) or a server's name; "" removes it. A tool's
// own permission wins over its server's.
func (p *Policy) SetPermission(target string, perm Permission) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if perm == "" {
		delete(p.permissions, target)
		return
	}
	if p.permissions == nil {
		p.permissions = map[string]Permission{}
	}
	p.permissions[target] = perm
}

// Permissions are the permissions set, by tool or server name.
func (p *Policy) Permissions() map[string]Permission {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.permissions)
}

// permissionOf is the permission that applies to t, and the name it is
// set for: the tool's own, else its server's.
func (p *Policy) permissionOf(t *host.Tool) (Permission, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if perm, ok := p.permissions[t.Name]; ok {
		return perm, t.Name
	}
	return p.permissions[t.Server], t.Server
}

// toolGrant is a skill's allowed-tools the user granted: tools of the
// skill's own server, by name or pattern, that run without asking.
type toolGrant struct {
	server string
	tools  []string
}

// Question is what the user is asked to approve: a tool call or a
// server's sampling request.
type Question struct {
	// Sampling is set for a sampling request, which Server sent.
	Sampling *protocol.CreateMessageParams
	Server   string
	// Name is the tool's name in the host's list, Tool the server's name
	// for it, Arguments the call's arguments.
	Name      string
	Tool      string
	Title     string
	Arguments jsontext.Value
	// ReadOnly, Destructive and OpenWorld are the tool's annotations with
	// their defaults applied (a tool that is not read-only is destructive
	// and open-world unless it says otherwise). Only a read-only tool may
	// be allowed for the rest of the session.
	ReadOnly, Destructive, OpenWorld bool
	// Skill is set for the load of a skill of Server, or for the grant
	// of its allowed-tools.
	Skill *SkillQuestion

	skillKey string // the session approval it gives; "" for none
}

// SkillQuestion is a skill the model asks to load, from its entry; with
// AllowedTools set, the question is instead whether to grant them.
type SkillQuestion struct {
	Name, URI, Description string
	// Files and Bytes count the skill's files (SKILL.md included);
	// Dynamic says the server generates them (no manifest to verify).
	Files   int
	Bytes   int64
	Dynamic bool
	// AllowedTools are the tools of the server the skill asks to run
	// without the user's approval (its allowed-tools).
	AllowedTools []string
}

// Answer is the user's decision.
type Answer int

// The answers.
const (
	// Refuse the call.
	Refuse Answer = iota
	// AllowOnce runs this call.
	AllowOnce
	// AllowSession runs this call and, for a read-only tool, every later
	// call of it in the session.
	AllowSession
)

// verdict is a decision with the reason given to the model when it is no.
type verdict struct {
	ok     bool
	reason string
	// unasked: refused because the user had to be asked and could not be.
	unasked bool
}

// decideTool decides a tool call: mode deny and the configuration's
// deny list first, then the user's permissions for the project (never
// before mode plan, which nothing else overrides), then the allow list,
// the session's answers and the mode.
func (p *Policy) decideTool(ctx context.Context, t *host.Tool, args jsontext.Value) verdict {
	if p == nil {
		return verdict{reason: "not run: the host has no approval policy"}
	}
	if p.Mode == Deny {
		return denyMode("tool calls")
	}
	if pat, ok := matchAny(p.Deny, t.Name); ok {
		return verdict{reason: fmt.Sprintf("not run: the configuration denies this tool (%q)", pat)}
	}
	q := &Question{Server: t.Server, Name: t.Name, Tool: t.Tool.Name, Title: t.Tool.Title, Arguments: args}
	q.ReadOnly, q.Destructive, q.OpenWorld = hints(t.Tool.Annotations)
	perm, by := p.permissionOf(t)
	switch {
	case perm == Never:
		return verdict{reason: fmt.Sprintf("not run: the user's permissions for this project say never for %s", by)}
	case p.Mode == Plan:
		return planVerdict(q)
	case perm == Always || p.sessionAllows(t):
		return verdict{ok: true}
	case perm == AskEach && p.Ask == nil:
		return verdict{unasked: true, reason: fmt.Sprintf("not run: the user's permissions for this project say ask for %s, "+
			"and there is no terminal to ask", by)}
	case perm == AskEach:
		return p.ask(ctx, q, "tool calls")
	}
	if _, ok := matchAny(p.Allow, t.Name); ok {
		return verdict{ok: true}
	}
	return p.decide(ctx, q, "tool calls")
}

// planVerdict is mode plan's decision: a read-only tool runs, and the
// model is told that nothing else does.
func planVerdict(q *Question) verdict {
	if q.ReadOnly {
		return verdict{ok: true}
	}
	return verdict{reason: "not run: approval mode plan runs only read-only tools (readOnlyHint), and this one may change things; " +
		"say what it would do in the plan instead"}
}

// sessionAllows reports whether the user allowed t for the session, or
// granted it through a skill's allowed-tools.
func (p *Policy) sessionAllows(t *host.Tool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.session[t.Name] || p.granted(t)
}

// decideSampling decides a server's sampling request.
func (p *Policy) decideSampling(ctx context.Context, server string, req *protocol.CreateMessageParams) verdict {
	if p == nil {
		return verdict{reason: "the host has no approval policy"}
	}
	if p.Mode == Deny {
		return denyMode("sampling requests")
	}
	if pat, ok := matchAny(p.SamplingDeny, server); ok {
		return verdict{reason: fmt.Sprintf("the configuration denies sampling to this server (%q)", pat)}
	}
	if _, ok := matchAny(p.SamplingAllow, server); ok {
		return verdict{ok: true}
	}
	return p.decide(ctx, &Question{Sampling: req, Server: server}, "sampling requests")
}

// decideSkill decides the load of a skill of server: approved for the
// session under the same files, or asked.
func (p *Policy) decideSkill(ctx context.Context, server string, s *skills.Skill) verdict {
	if p == nil {
		return verdict{reason: "not loaded: the host has no approval policy"}
	}
	if p.Mode == Deny {
		return verdict{reason: "not loaded: skill loads are denied (approval mode deny)"}
	}
	key := skillApprovalKey(server, s)
	p.mu.Lock()
	allowed := key != "" && p.skills[key]
	p.mu.Unlock()
	if allowed {
		return verdict{ok: true}
	}
	q := &Question{Server: server, Name: s.Name(), Skill: skillQuestion(s), skillKey: key}
	return p.decide(ctx, q, "skill loads")
}

// decideGrant asks whether to grant a skill's allowed-tools, in mode ask
// with someone to ask; it returns the tools granted, none unless the
// user said yes. In mode auto every call runs anyway, and without a
// terminal no grant is made.
func (p *Policy) decideGrant(ctx context.Context, server string, s *skills.Skill) []string {
	tools := allowedTools(s)
	if p == nil || p.Mode != Ask || p.Ask == nil || len(tools) == 0 {
		return nil
	}
	q := &Question{Server: server, Name: s.Name(), Skill: skillQuestion(s)}
	q.Skill.AllowedTools = tools
	if a, err := p.Ask(ctx, q); err != nil || a == Refuse {
		return nil
	}
	p.mu.Lock()
	p.grants = append(p.grants, toolGrant{server: server, tools: tools})
	p.mu.Unlock()
	return tools
}

// granted reports whether a granted allowed-tools covers t: a tool of
// the granting skill's own server. p.mu is held.
func (p *Policy) granted(t *host.Tool) bool {
	for _, g := range p.grants {
		if _, ok := matchAny(g.tools, t.Tool.Name); ok && g.server == t.Server {
			return true
		}
	}
	return false
}

func skillQuestion(s *skills.Skill) *SkillQuestion {
	q := &SkillQuestion{Name: s.Name(), URI: s.URI, Description: s.Description(), Dynamic: s.Dynamic, Files: len(s.Resources)}
	for _, r := range s.Resources {
		q.Bytes += r.Size
	}
	return q
}

// skillApprovalKey binds an approval to the server, the skill and every
// file's URI and digest; a dynamic skill, whose content is not bound,
// has none (it is asked for each time).
func skillApprovalKey(server string, s *skills.Skill) string {
	if s.Dynamic {
		return ""
	}
	parts := []string{server, s.URI}
	for _, r := range s.Resources {
		parts = append(parts, r.URI+"="+r.Digest)
	}
	slices.Sort(parts[2:])
	return strings.Join(parts, "\x00")
}

// denyMode is the verdict of mode deny.
func denyMode(what string) verdict {
	return verdict{reason: "not run: " + what + " are denied (approval mode deny)"}
}

// decide approves in mode auto, and otherwise asks.
func (p *Policy) decide(ctx context.Context, q *Question, what string) verdict {
	if p.Mode == Auto {
		return verdict{ok: true}
	}
	return p.ask(ctx, q, what)
}

// ask asks the user, refusing when there is no one to ask; an answer of
// always for the session is remembered.
func (p *Policy) ask(ctx context.Context, q *Question, what string) verdict {
	if p.Ask == nil {
		return verdict{unasked: true, reason: "not run: " + what + " need the user's approval and there is no terminal to ask; " +
			"rerun with --approval auto, or allow this in the configuration"}
	}
	a, err := p.Ask(ctx, q)
	if err != nil {
		return verdict{reason: "not run: the user was not asked: " + err.Error()}
	}
	switch a {
	case AllowSession:
		if q.skillKey != "" {
			p.mu.Lock()
			if p.skills == nil {
				p.skills = map[string]bool{}
			}
			p.skills[q.skillKey] = true
			p.mu.Unlock()
		} else if q.Sampling == nil && q.Skill == nil && q.ReadOnly {
			p.mu.Lock()
			if p.session == nil {
				p.session = map[string]bool{}
			}
			p.session[q.Name] = true
			p.mu.Unlock()
		}
		return verdict{ok: true}
	case AllowOnce:
		return verdict{ok: true}
	}
	return verdict{reason: "not run: the user denied it"}
}

// hints applies the defaults of the tool annotations: "destructiveHint"
// and "openWorldHint" default to true, and mean nothing for a read-only
// tool.
func hints(a *protocol.ToolAnnotations) (readOnly, destructive, openWorld bool) {
	destructive, openWorld = true, true
	if a == nil {
		return
	}
	if a.ReadOnlyHint != nil {
		readOnly = *a.ReadOnlyHint
	}
	if a.DestructiveHint != nil {
		destructive = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		openWorld = *a.OpenWorldHint
	}
	if readOnly {
		destructive = false
	}
	return
}

// matchAny returns the first pattern that matches name.
func matchAny(patterns []string, name string) (string, bool) {
	for _, p := range patterns {
		if ok, err := path.Match(p, name); ok || err != nil && p == name {
			return p, true
		}
	}
	return "", false
}
