package main

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/ferrymcp/ferry/auth"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
)

// The identity ferry serve presents to its remote servers: an entry's
// OAuth settings (config.OAuth) say which. Without a grant, the token
// "ferry login" stored for the server, refreshed when it expires, as
// every other command sends it. With "grant": "client_credentials",
// tokens of the gateway's own client, obtained when the server first
// refuses a request and again whenever it refuses the token (the request
// is sent once more, and the requests refused meanwhile wait for the one
// new token). With "grant": "token_exchange", a caller's call goes with a
// token obtained for that caller by exchanging the caller's own token
// (RFC 8693), which needs the configuration's "identity": the callers'
// tokens are then the authorization server's; what no caller asks (the
// connection's setup) goes with the client's own token. The caller's own
// token is never sent to a server.

// upstreamAuth keeps the authorization of each remote server across its
// reconnections.
type upstreamAuth struct {
	o   *cli
	log *slog.Logger

	mu sync.Mutex
	m  map[string]*upstreamCreds
}

// upstreamCreds is the authorization of one server entry.
type upstreamCreds struct {
	cfg  *config.Server
	wrap func(http.RoundTripper) http.RoundTripper
}

// setupUpstreamAuth puts the authorization of the remote servers in the
// gateway's options (Host.WrapHTTP), and, when a server acts for the
// callers by token exchange and the callers' tokens are the identity
// provider's (identity), keeps each request's token for the exchange.
func setupUpstreamAuth(o *cli, servers []*config.Server, opts *gateway.Options, identity bool, log *slog.Logger) {
	u := &upstreamAuth{o: o, log: log, m: map[string]*upstreamCreds{}}
	opts.Host.WrapHTTP = u.wrapHTTP
	exchanges := false
	for _, s := range servers {
		exchanges = exchanges || (s.OAuth != nil && s.OAuth.Grant == config.GrantTokenExchange)
	}
	switch {
	case exchanges && identity:
		opts.Auth = keepSubjectTokens(opts.Auth)
	case exchanges:
		log.Warn("a server's grant is token_exchange, but the callers' tokens are not an identity provider's (no \"identity\" in the configuration): calls go with the gateway's own token")
	}
}

// wrapHTTP is the host's WrapHTTP.
func (u *upstreamAuth) wrapHTTP(s *config.Server, rt http.RoundTripper) http.RoundTripper {
	if !usesOAuth(s) {
		return rt
	}
	if s.OAuth == nil || s.OAuth.Grant == "" {
		return u.o.wrapHTTP(s, rt) // ferry login's token
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.m[s.Name]
	if c == nil || !c.cfg.Runs(s) {
		c = &upstreamCreds{cfg: s, wrap: u.credentials(s)}
		u.m[s.Name] = c
	}
	return c.wrap(rt)
}

// credentials builds the authorization of an entry with a grant.
func (u *upstreamAuth) credentials(s *config.Server) func(http.RoundTripper) http.RoundTripper {
	oc := s.OAuth
	own := &auth.Authorizer{
		Server:  s.URL,
		Grant:   &auth.ClientCredentials{ClientID: oc.ClientID, ClientSecret: oc.ClientSecret},
		Clients: []auth.RegisteredClient{{ID: oc.ClientID, Secret: oc.ClientSecret}},
		Scopes:  oc.Scopes,
		Store:   &auth.MemoryStore{},
		Logger:  u.log,
	}
	if oc.Grant != config.GrantTokenExchange {
		return own.RoundTripper
	}
	x := &auth.Exchanger{Server: s.URL, ClientID: oc.ClientID, ClientSecret: oc.ClientSecret,
		Audience: oc.Audience, Scopes: oc.Scopes, Logger: u.log}
	return func(rt http.RoundTripper) http.RoundTripper { return x.RoundTripper(rt, own.RoundTripper(rt)) }
}

// keepSubjectTokens wraps the identity's authentication so that the
// requests it lets through carry their access token in their context
// (auth.WithSubjectToken), for the token exchanges made for their
// callers; the handlers never see it in a header.
func keepSubjectTokens(authn func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		checked := authn(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
			if ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != "" {
				r = r.WithContext(auth.WithSubjectToken(r.Context(), strings.TrimSpace(tok)))
			}
			checked.ServeHTTP(w, r)
		})
	}
}
