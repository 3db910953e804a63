package intercept

import (
	"context"
	"net/netip"
	"time"
)

// Caller is who a request comes from, as the authentication in front of
// the server says. One Caller type serves every authentication: ferry's
// resource server (auth/resourceserver) fills it from an OAuth token, the
// gateway's bearer tokens from the token a client presented, a user's own
// middleware from whatever it checks. Callers may be shared by the
// requests of one credential: read them, do not change them.
type Caller struct {
	// ID is the stable, unique name the server binds to what a caller
	// opens (its legacy sessions, its tasks) and counts as one client in
	// the bounds its clients share: e.g. a token's issuer and subject, or
	// the name of a token in a token file. It must not be empty.
	ID string
	// Subject identifies the user (or the client, for a client acting on
	// its own behalf); ClientID is the OAuth client a token was issued
	// to; Issuer issued the credential; Expiry is when it expires (zero
	// for never).
	Subject  string
	ClientID string
	Issuer   string
	Expiry   time.Time
	// Roles and Scopes are what the credential grants, for policy.
	Roles  []string
	Scopes []string
	// Claims are the token's claims (a JWT's) or its introspection
	// answer, nil for credentials that have none.
	Claims map[string]any
}

// callerKey is the context key of a request's Caller.
type callerKey struct{}

// WithCaller returns ctx, the context of a request to an MCP server (an
// HTTP request's, typically), naming c as its authenticated caller. The
// server then reports c as the [Request.Caller] of the requests that
// context carries, binds the sessions and tasks they open to c.ID, and
// counts c.ID as one client in the bounds its clients share. Every
// authentication in front of a server calls it for each request it lets
// through (ferry's resource server and gateway do), and tests of handlers
// may.
//
// It panics when c is nil or c.ID is empty: a caller without a name
// would share what it opens with every other such caller.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	if c == nil || c.ID == "" {
		panic("intercept: WithCaller of a Caller without ID")
	}
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller [WithCaller] named in ctx (or in a
// context ctx derives from), and false when none did: the request is not
// authenticated.
func CallerFrom(ctx context.Context) (*Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(*Caller)
	return c, ok
}

// ClientKey names who a request comes from, for the bounds a server
// shares among its clients (the tasks it keeps, the sessions it holds, a
// gateway's processes and rate limits): "caller:" and the ID of the
// caller ctx names ([WithCaller]) when there is one, else "addr:" and the
// client's address (remoteAddr, an http.Request's), IPv6 addresses by
// their /64 (one host commonly has a whole /64 to pick from); "" when
// neither is known (a stream: stdio, in-memory). Clients behind one proxy
// share its address, and so its key.
func ClientKey(ctx context.Context, remoteAddr string) string {
	if c, ok := CallerFrom(ctx); ok {
		return "caller:" + c.ID
	}
	if remoteAddr == "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return "addr:" + remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "addr:" + p.String()
	}
	return "addr:" + a.String()
}
