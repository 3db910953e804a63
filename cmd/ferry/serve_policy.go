package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/auth/resourceserver"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/gateway/audit"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

// servePolicy is what ferry serve holds from the gateway's sections of
// its configuration: the access rules in force (swapped by SIGHUP), the
// audit log, and the other parts a reload builds again (views, limits:
// each registers a reloader with add).
type servePolicy struct {
	access *access.Live
	audit  *audit.Log // nil without an "audit" section

	mu        sync.Mutex
	reloaders []reloader
}

// A reloader builds one part of the policy from a reading of the
// configuration, without putting it in force: apply does that, and is
// called only once every part has built.
type reloader func(files []*config.File) (apply func(), err error)

// add registers a part that a reload builds again.
func (p *servePolicy) add(r reloader) {
	p.mu.Lock()
	p.reloaders = append(p.reloaders, r)
	p.mu.Unlock()
}

// newServePolicy builds the policy of the configuration files and puts
// its middleware in opts: the audit first, so that it records the calls
// the rules refuse, then the rules.
func newServePolicy(files []*config.File, opts *gateway.Options, stderr io.Writer, log *slog.Logger) (*servePolicy, error) {
	rules, err := accessOf(files)
	if err != nil {
		return nil, err
	}
	p := &servePolicy{access: access.NewLive(rules)}
	p.add(func(files []*config.File) (func(), error) {
		rules, err := accessOf(files)
		return func() { p.access.Set(rules) }, err
	})
	var a config.Audit
	from, err := config.FirstSection(files, "audit", &a)
	if err != nil {
		return nil, err
	}
	if from != nil {
		if p.audit, err = audit.Open(&a, stderr); err != nil {
			return nil, config.SectionError(from.Path, "audit", err)
		}
		opts.Middleware = append(opts.Middleware, p.audit.Middleware(func(err error) {
			log.Error("audit: a record could not be written", "error", err)
		}))
		p.add(func(files []*config.File) (func(), error) { return p.reopenAudit(files, stderr, log) })
	}
	opts.Middleware = append(opts.Middleware, p.access.Middleware())
	opts.Hears = p.access.Hears
	return p, nil
}

// reopenAudit checks the audit section of files and returns what opens
// its file again (a rotation moved the old one away, or the section
// names another): a reload does it. Without the section, records go to
// stderr; a configuration that had none at the start gets none (the
// audit is not in the gateway's middleware).
func (p *servePolicy) reopenAudit(files []*config.File, stderr io.Writer, log *slog.Logger) (func(), error) {
	var a config.Audit
	from, err := config.FirstSection(files, "audit", &a)
	if err != nil {
		return nil, err
	}
	apply, err := p.audit.Reopen(&a, stderr)
	if err != nil {
		return nil, config.SectionError(from.Path, "audit", err) // from is set: stderr cannot fail
	}
	return func() {
		if err := apply(); err != nil {
			log.Error("SIGHUP: the audit file cannot be opened again; records go on to the one open", "error", err)
		}
	}, nil
}

// accessOf compiles the "access" section of the first file that has
// one; nil (everything allowed) when none has.
func accessOf(files []*config.File) (*access.Policy, error) {
	var a config.Access
	from, err := config.FirstSection(files, "access", &a)
	if err != nil || from == nil {
		return nil, err
	}
	rules, err := access.Compile(&a)
	if err != nil {
		return nil, config.SectionError(from.Path, "access", err)
	}
	return rules, nil
}

// reload builds every part of the policy from files and, only when all
// of them build, puts them in force; otherwise nothing changes and the
// error names what is wrong.
func (p *servePolicy) reload(files []*config.File) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var applies []func()
	var errs []error
	for _, r := range p.reloaders {
		apply, err := r(files)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		applies = append(applies, apply)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, apply := range applies {
		apply()
	}
	return nil
}

// close closes the audit log.
func (p *servePolicy) close() {
	if p != nil && p.audit != nil {
		p.audit.Close()
	}
}

// identity is the gateway as an OAuth resource server, for a
// configuration with an "identity" section: it checks every request's
// access token and names its caller (the token's subject, claims, scopes
// and roles), and serves the Protected Resource Metadata clients find the
// authorization server from. A nil *identity is no such section. SIGHUP
// swaps in the section read again (reloadIdentity): each request is
// checked by the one in force when it comes.
type identity struct {
	cur atomic.Pointer[resourceserver.Config]
	// toolScopes is what stepUp gives every resource server in force.
	toolScopes func(r *http.Request, c *intercept.Caller, tool string) []string
}

// identityAuth returns the identity of the first file with an "identity"
// section, nil when none has one.
func identityAuth(files []*config.File, log *slog.Logger) (*identity, error) {
	var id config.Identity
	from, err := config.FirstSection(files, "identity", &id)
	if err != nil || from == nil {
		return nil, err
	}
	rs, err := resourceServer(&id, log)
	if err != nil {
		return nil, config.SectionError(from.Path, "identity", err)
	}
	out := &identity{}
	out.cur.Store(rs)
	return out, nil
}

// auth is the gateway's Options.Auth.
func (id *identity) auth() func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		next = authenticated(next)
		return id.follow(func(rs *resourceserver.Config) http.Handler { return rs.Protect(next) })
	}
}

// handlers are the gateway's Options.Handlers: the metadata, at the path
// of the resource the gateway started with (a reload keeps it).
func (id *identity) handlers() map[string]http.Handler {
	if id == nil {
		return nil
	}
	return map[string]http.Handler{"GET " + id.cur.Load().MetadataPath(): id.follow((*resourceserver.Config).Metadata)}
}

// follow returns a handler that serves each request with what build
// makes of the resource server in force, made once for each.
func (id *identity) follow(build func(*resourceserver.Config) http.Handler) http.Handler {
	type made struct {
		rs *resourceserver.Config
		h  http.Handler
	}
	var last atomic.Pointer[made]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs := id.cur.Load()
		m := last.Load()
		if m == nil || m.rs != rs {
			m = &made{rs, build(rs)}
			last.Store(m)
		}
		m.h.ServeHTTP(w, r)
	})
}

// reloadIdentity is the reload of the identity section: issuer,
// audience, keys or introspection, scopes and roles claim are taken
// whole with the rest of the configuration, and sessions stay. A
// session stays its caller's only: every request's token is checked by
// the section in force, and the caller it names (issuer and subject)
// must be the one that opened the session (the gateway's bindSessions),
// so that after a change of issuer the old issuer's callers reach
// nothing (and hear nothing on a stream they hold open: hearIssuer). A
// reload cannot add or remove the section (the way clients authenticate
// is the listener's), nor move its metadata (the resource's path).
func reloadIdentity(id *identity, log *slog.Logger) reloader {
	return func(files []*config.File) (func(), error) {
		next, err := identityAuth(files, log)
		switch {
		case err != nil:
			return nil, err
		case id == nil && next == nil:
			return func() {}, nil
		case id == nil:
			return nil, errors.New(`identity: a reload cannot add the section: clients authenticate as ferry serve started (restart it)`)
		case next == nil:
			return nil, errors.New(`identity: a reload cannot remove the section: clients authenticate as ferry serve started (restart it)`)
		}
		rs, old := next.cur.Load(), id.cur.Load()
		if rs.MetadataPath() != old.MetadataPath() {
			return nil, fmt.Errorf("identity.resource: a reload cannot move the metadata from %s to %s (restart ferry serve)", old.MetadataPath(), rs.MetadataPath())
		}
		rs.ToolScopesFunc = id.toolScopes
		return func() { id.cur.Store(rs) }, nil
	}
}

// stepUp makes a call that the access rules would allow with scopes the
// token lacks a 403 insufficient_scope naming them, for the client to
// step up from, where the endpoint tells the tool's qualified name (see
// access.Live.ToolScopes); the audit records it.
func (id *identity) stepUp(pol *servePolicy, opts *gateway.Options) {
	if id == nil {
		return
	}
	prefixed := opts.Prefix == "" || opts.Prefix == host.PrefixAlways
	scopes := pol.access.ToolScopes(cmp.Or(opts.Separator, host.DefaultSeparator), prefixed)
	id.toolScopes = func(r *http.Request, c *intercept.Caller, tool string) []string {
		need := scopes(r, c, tool)
		if len(need) > 0 && pol.audit != nil {
			server := ""
			if strings.HasPrefix(r.URL.Path, "/servers/") {
				server = r.PathValue("name")
			}
			pol.audit.Refused(c, server, protocol.MethodToolsCall, tool, "insufficient_scope", http.StatusForbidden)
		}
		return need
	}
	id.cur.Load().ToolScopesFunc = id.toolScopes
}

// hearIssuer keeps the clients of callers of another issuer than the
// one in force from hearing what servers send on their own: a session
// opened before a reload changed the issuer cannot make a request any
// more (its token is refused), but a GET stream it had open goes on, and
// what comes on it (a server's logs, a resource's updates) is not for a
// caller the gateway would not let in now.
func (id *identity) hearIssuer(opts *gateway.Options) {
	if id == nil || opts.Hears == nil {
		return
	}
	hears := opts.Hears
	opts.Hears = func(c *intercept.Caller, e *gateway.Endpoint, n gateway.Notice) bool {
		if c != nil && c.Issuer != "" && !slices.Contains(id.cur.Load().AuthorizationServers, c.Issuer) {
			return false
		}
		return hears(c, e, n)
	}
}

// resourceServer is the resource server an identity section describes.
func resourceServer(id *config.Identity, log *slog.Logger) (*resourceserver.Config, error) {
	switch {
	case id.Issuer == "":
		return nil, &config.FieldError{Path: "issuer", Err: errors.New("is required: the authorization server's issuer identifier")}
	case id.Resource == "":
		return nil, &config.FieldError{Path: "resource", Err: errors.New("is required: the gateway's /mcp address as clients reach it")}
	}
	if _, err := metadata.ProtectedResourcePath(id.Resource); err != nil {
		return nil, &config.FieldError{Path: "resource", Err: err}
	}
	var v resourceserver.Verifier = &resourceserver.JWT{Issuer: id.Issuer, Audience: id.Audience, JWKSURL: id.JWKSURI}
	if in := id.Introspection; in != nil {
		secret, err := config.DefaultOptions().Vars.Expand(in.ClientSecret)
		if err != nil {
			return nil, &config.FieldError{Path: "introspection.client_secret", Err: err}
		}
		v = &resourceserver.Introspection{Endpoint: in.URL, Issuer: id.Issuer, Audience: id.Audience, ClientID: in.ClientID, ClientSecret: secret}
	}
	claim := id.RolesClaim
	if claim == "" {
		claim = "roles"
	}
	return &resourceserver.Config{
		Resource:             id.Resource,
		AuthorizationServers: []string{id.Issuer},
		Verifier:             &withRoles{v, claim},
		Scopes:               id.Scopes,
		ScopesSupported:      id.ScopesSupported,
		Logger:               log,
	}, nil
}

// authenticated reports the caller the resource server let through to
// the listener, whose connection then counts against the caller's share
// of the connections (as a bearer token's does, see
// gateway.BearerTokens), not its address's.
func authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, ok := intercept.CallerFrom(r.Context()); ok && !httpserver.Authenticated(r.Context(), c.ID) {
			w.Header().Set("Connection", "close")
			http.Error(w, "too many connections for this caller", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// withRoles is a verifier whose callers hold the roles their token's
// claim names: a list of strings, or one string of roles separated by
// spaces (a claim of nested objects is named with dots, as
// "realm_access.roles").
type withRoles struct {
	resourceserver.Verifier
	claim string
}

func (v *withRoles) Verify(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	c, err := v.Verifier.Verify(ctx, token, audience)
	if err != nil {
		return nil, err
	}
	// The verifier shares its callers between the requests of a token:
	// the roles go on a copy.
	withRoles := *c
	withRoles.Roles = rolesOf(c.Claims, v.claim)
	return &withRoles, nil
}

func rolesOf(claims map[string]any, name string) []string {
	v, _ := access.Claim(claims, name)
	switch x := v.(type) {
	case string:
		return strings.Fields(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, r := range x {
			if s, ok := r.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
