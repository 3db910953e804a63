package agent

import (
	"context"
	"fmt"
	"path"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
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
)

// ParseMode reads "ask", "auto" or "deny".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Ask, Auto, Deny:
		return m, nil
	}
	return "", fmt.Errorf("approval must be ask, auto or deny, not %q", s)
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

// decideTool decides a tool call.
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
	if _, ok := matchAny(p.Allow, t.Name); ok {
		return verdict{ok: true}
	}
	p.mu.Lock()
	allowed := p.session[t.Name]
	p.mu.Unlock()
	if allowed {
		return verdict{ok: true}
	}
	q := &Question{Server: t.Server, Name: t.Name, Tool: t.Tool.Name, Title: t.Tool.Title, Arguments: args}
	q.ReadOnly, q.Destructive, q.OpenWorld = hints(t.Tool.Annotations)
	return p.decide(ctx, q, "tool calls")
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

// denyMode is the verdict of mode deny.
func denyMode(what string) verdict {
	return verdict{reason: "not run: " + what + " are denied (approval mode deny)"}
}

func (p *Policy) decide(ctx context.Context, q *Question, what string) verdict {
	if p.Mode == Auto {
		return verdict{ok: true}
	}
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
		if q.Sampling == nil && q.ReadOnly {
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
