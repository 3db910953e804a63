// Package access holds a gateway's access rules (the "access" section of
// its configuration, [config.Access]): which callers may use which
// tools, prompts and resources. [Compile] checks and compiles them into a
// [Policy]; [Live] holds the policy in force, which a reload swaps; its
// [Live.Middleware] refuses what the rules refuse and filters the lists
// to what the caller may use, on every endpoint of the gateway.
package access

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
)

// Kind is what a rule is about.
type Kind int

// The kinds of what rules are about.
const (
	Tool Kind = iota
	Prompt
	Resource
)

// Target is what a caller wants to use: a tool or prompt by its
// qualified name (SERVER__NAME), a resource by its URI; through a view,
// Alias is its name there (VIEW:NAME), which rules may name too.
type Target struct {
	Kind  Kind
	Name  string
	Alias string
}

// Policy is a compiled access section. The zero Policy allows
// everything.
type Policy struct {
	rules []rule
	deny  bool // what happens when no rule applies
}

type rule struct {
	desc  string
	allow bool
	cond  condition
	pats  [3][]string // by Kind
}

type condition struct {
	callers, roles, scopes []string
	claims                 map[string][]string
}

// Decision is the outcome of a [Policy.Decide].
type Decision struct {
	Allowed bool
	// Rule is the index of the rule that decided, -1 for the default.
	Rule int
	// Description is that rule's description.
	Description string
	// MissingScopes, for a refusal, are scopes that would have allowed
	// it: those an allow rule about the target needs and the caller
	// lacks, when nothing else keeps that rule from holding and no deny
	// rule holds.
	MissingScopes []string
}

// Compile checks an access section and compiles it. Its errors are
// [*config.FieldError]s naming the bad field.
func Compile(a *config.Access) (*Policy, error) {
	if a == nil {
		return &Policy{}, nil
	}
	p := &Policy{deny: true}
	switch a.Default {
	case "", "deny":
	case "allow":
		p.deny = false
	default:
		return nil, &config.FieldError{Path: "default", Err: fmt.Errorf("must be \"allow\" or \"deny\", not %q", a.Default)}
	}
	var errs []error
	for i := range a.Rules {
		r, err := compileRule(&a.Rules[i])
		if err != nil {
			errs = append(errs, &config.FieldError{Path: fmt.Sprintf("rules[%d]%s", i, err.path), Err: err.err})
			continue
		}
		p.rules = append(p.rules, r)
	}
	return p, errors.Join(errs...)
}

// ruleError is a problem with a rule, at path below it.
type ruleError struct {
	path string
	err  error
}

func compileRule(cr *config.AccessRule) (rule, *ruleError) {
	r := rule{desc: cr.Description, pats: [3][]string{cr.Tools, cr.Prompts, cr.Resources}}
	c := cr.Allow
	switch {
	case cr.Allow != nil && cr.Deny != nil:
		return r, &ruleError{"", errors.New(`has both "allow" and "deny": write two rules`)}
	case cr.Allow != nil:
		r.allow = true
	case cr.Deny != nil:
		c = cr.Deny
	default:
		return r, &ruleError{"", errors.New(`needs "allow" or "deny" (an empty condition, {}, is every caller)`)}
	}
	if len(cr.Tools)+len(cr.Prompts)+len(cr.Resources) == 0 {
		return r, &ruleError{"", errors.New(`names no "tools", "prompts" or "resources" (["*"] is all of them)`)}
	}
	for k, name := range []string{"tools", "prompts", "resources"} {
		for j, pat := range r.pats[k] {
			if pat == "" {
				return r, &ruleError{fmt.Sprintf(".%s[%d]", name, j), errors.New("is empty")}
			}
		}
	}
	r.cond = condition{callers: c.Callers, roles: c.Roles, scopes: c.Scopes}
	if len(c.Claims) > 0 {
		r.cond.claims = map[string][]string{}
	}
	for k, v := range c.Claims {
		want, ok := claimValues(v)
		if !ok {
			return r, &ruleError{"." + kindOf(r.allow) + ".claims." + k, errors.New("must be a string, number or boolean, or a list of them")}
		}
		r.cond.claims[k] = want
	}
	return r, nil
}

func kindOf(allow bool) string {
	if allow {
		return "allow"
	}
	return "deny"
}

// Decide says whether c may use t: a deny rule that holds refuses; else
// an allow rule that holds allows; else the default decides. A nil
// caller (no authentication in front) matches only empty conditions.
func (p *Policy) Decide(c *intercept.Caller, t Target) Decision {
	if p == nil {
		return Decision{Allowed: true, Rule: -1}
	}
	allowed := -1
	var missing []string
	for i := range p.rules {
		r := &p.rules[i]
		if !r.about(t) {
			continue
		}
		lacks, holds := r.cond.check(c)
		switch {
		case holds && !r.allow:
			return Decision{Rule: i, Description: r.desc}
		case holds && allowed < 0:
			allowed = i
		case !holds && r.allow && missing == nil && len(lacks) > 0:
			missing = lacks
		}
	}
	if allowed >= 0 {
		return Decision{Allowed: true, Rule: allowed, Description: p.rules[allowed].desc}
	}
	d := Decision{Allowed: !p.deny, Rule: -1, Description: "default " + kindOf(!p.deny)}
	if !d.Allowed {
		d.MissingScopes = missing
	}
	return d
}

// Visible reports whether c may use t (a list shows only those).
func (p *Policy) Visible(c *intercept.Caller, t Target) bool {
	return p.Decide(c, t).Allowed
}

// about reports whether the rule covers t.
func (r *rule) about(t Target) bool {
	for _, pat := range r.pats[t.Kind] {
		if glob(pat, t.Name) || t.Alias != "" && glob(pat, t.Alias) {
			return true
		}
	}
	return false
}

// check reports whether the condition holds for c, and, when it fails
// only for want of scopes, the scopes c lacks.
func (cd *condition) check(c *intercept.Caller) (lacks []string, holds bool) {
	if c == nil {
		c = &intercept.Caller{}
	}
	if len(cd.callers) > 0 && !slices.ContainsFunc(cd.callers, func(n string) bool { return n == c.ID || n == c.Subject && c.Subject != "" }) {
		return nil, false
	}
	if len(cd.roles) > 0 && !slices.ContainsFunc(cd.roles, func(r string) bool { return slices.Contains(c.Roles, r) }) {
		return nil, false
	}
	for k, want := range cd.claims {
		if !claimHolds(c.Claims, k, want) {
			return nil, false
		}
	}
	for _, s := range cd.scopes {
		if !slices.Contains(c.Scopes, s) {
			lacks = append(lacks, s)
		}
	}
	return lacks, len(lacks) == 0
}

// claimHolds reports whether claim k of claims has one of the values of
// want (for a list claim, whether one of its items has).
func claimHolds(claims map[string]any, k string, want []string) bool {
	v, ok := Claim(claims, k)
	if !ok {
		return false
	}
	have, _ := claimValues(v)
	return slices.ContainsFunc(have, func(h string) bool { return slices.Contains(want, h) })
}

// Claim returns claim name of claims: a top-level claim, else a path of
// nested objects written with dots ("realm_access.roles", as Keycloak
// nests roles).
func Claim(claims map[string]any, name string) (any, bool) {
	if v, ok := claims[name]; ok {
		return v, true
	}
	head, rest, ok := strings.Cut(name, ".")
	if !ok {
		return nil, false
	}
	sub, ok := claims[head].(map[string]any)
	if !ok {
		return nil, false
	}
	return Claim(sub, rest)
}

// claimValues returns a claim's scalar value, or a list's, as strings.
func claimValues(v any) ([]string, bool) {
	if list, ok := v.([]any); ok {
		out := make([]string, 0, len(list))
		for _, x := range list {
			s, ok := scalar(x)
			if !ok {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	if list, ok := v.([]string); ok {
		return list, true
	}
	s, ok := scalar(v)
	return []string{s}, ok
}

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// glob reports whether name matches pattern, in which * stands for any
// run of characters (slashes too: a resource pattern "file:///docs/*"
// matches every file under docs) and nothing else is special.
func glob(pattern, name string) bool {
	first, rest, wild := strings.Cut(pattern, "*")
	if !wild {
		return pattern == name
	}
	if !strings.HasPrefix(name, first) {
		return false
	}
	name = name[len(first):]
	for {
		part, more, wild := strings.Cut(rest, "*")
		if !wild {
			return strings.HasSuffix(name, part) // the last part ends the name
		}
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name, rest = name[i+len(part):], more
	}
}
