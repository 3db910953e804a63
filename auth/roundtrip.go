package auth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// RoundTripper returns an http.RoundTripper that sends requests with
// base (http.DefaultTransport when nil), each request to the server
// carrying its token. When the server refuses a request (401, or 403
// with insufficient_scope), it finds the server's authorization server,
// obtains a token with the Grant (asking for more scopes on a 403) and
// sends the request once more: the caller sees the answer to that
// request, not the refusal. It gives up after MaxAuthorizations, or when
// an authorization makes no progress, and returns the last refusal.
//
// Give it to an MCP client's HTTP transport:
//
//	hc := &http.Client{Transport: a.RoundTripper(nil)}
//	t := &streamable.Transport{URL: server, Client: hc}
func (a *Authorizer) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &roundTripper{a: a, base: base}
}

type roundTripper struct {
	a    *Authorizer
	base http.RoundTripper
}

// refusal is a server's refusal of a request: what the authorization
// that follows needs from it.
type refusal struct {
	status     int
	challenges []metadata.Challenge
	sent       *Token // the token the refused request carried
	force      bool   // a new authorization even if a token is stored
}

// scopes returns the scopes a refusal asks for.
func (r *refusal) scopes() []string {
	if c, ok := metadata.FindChallenge(r.challenges, "Bearer", "DPoP"); ok {
		return c.Scopes()
	}
	return nil
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	a := rt.a
	a.learnServer(req.URL)
	if !sameOrigin(req.URL, a.server()) {
		return rt.base.RoundTrip(req)
	}
	ctx := req.Context()
	tok := a.current(ctx)
	fresh := false // tok came from an authorization made for this request
	authorizations, nonceRetried := 0, false
	for attempt := 0; ; attempt++ {
		r, err := rt.prepare(req, attempt, tok)
		if err != nil {
			return nil, err
		}
		resp, err := rt.base.RoundTrip(r)
		if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
			if err == nil && tok != nil && tok.isDPoP() {
				a.loadedDPoP().noteNonce(req.URL.String(), resp.Header)
			}
			return resp, err
		}
		rf := &refusal{status: resp.StatusCode, challenges: metadata.ParseChallenges(resp.Header.Values("WWW-Authenticate")), sent: tok}
		if tok != nil && tok.isDPoP() && !nonceRetried && isNonceChallenge(rf) && a.loadedDPoP().noteNonce(req.URL.String(), resp.Header) {
			// "use_dpop_nonce" (RFC 9449 §9): the same request again,
			// with the nonce; not an authorization.
			nonceRetried = true
			discard(resp)
			continue
		}
		if !rt.worthAuthorizing(req, rf, tok, fresh, authorizations) {
			return resp, nil
		}
		// Another request may have brought a new token meanwhile.
		if cur := a.current(ctx); cur != nil && tok != nil && cur.AccessToken != tok.AccessToken && rf.status == http.StatusUnauthorized && attempt < 2*a.maxAuthorizations() {
			discard(resp)
			tok, fresh = cur, false
			continue
		}
		nt, err := a.authorizeShared(ctx, rf)
		if errors.Is(err, errNoGrant) {
			return resp, nil
		}
		discard(resp)
		if err != nil {
			return nil, err
		}
		tok, fresh = nt, true
		authorizations++
	}
}

// worthAuthorizing reports whether a refusal may be cured by an
// authorization: a 401, unless the token refused was obtained for this
// very request; a 403 insufficient_scope asking for scopes the token
// lacks; and only while the limit of authorizations is not reached and
// the request can be sent again.
func (rt *roundTripper) worthAuthorizing(req *http.Request, rf *refusal, tok *Token, fresh bool, authorizations int) bool {
	if authorizations >= rt.a.maxAuthorizations() {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return false
	}
	if rf.status == http.StatusUnauthorized {
		return !fresh
	}
	c, ok := metadata.FindChallenge(rf.challenges, "Bearer", "DPoP")
	if !ok || c.Param(metadata.ParamError) != metadata.ErrorInsufficientScope {
		return false
	}
	// A token already granted every scope asked: another authorization
	// would not change the server's mind.
	return tok == nil || !tok.covers(c.Scopes())
}

// prepare returns the request to send: req itself the first time, with
// its body again after; with tok in Authorization (and a DPoP proof).
func (rt *roundTripper) prepare(req *http.Request, attempt int, tok *Token) (*http.Request, error) {
	var r *http.Request
	if attempt == 0 {
		r = req.Clone(req.Context())
	} else {
		var err error
		if r, err = rewind(req); err != nil {
			return nil, err
		}
	}
	if tok == nil {
		return r, nil
	}
	r.Header.Set("Authorization", tok.scheme()+" "+tok.AccessToken)
	if tok.isDPoP() {
		d, err := rt.a.dpopKey(req.Context())
		if err != nil {
			return nil, err
		}
		p, err := d.proof(r.Method, r.URL.String(), tok.AccessToken)
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
	}
	return r, nil
}

func isNonceChallenge(rf *refusal) bool {
	c, ok := metadata.FindChallenge(rf.challenges, "DPoP")
	return ok && c.Param(metadata.ParamError) == metadata.ErrorUseDPoPNonce
}

// discard reads a little of an unused answer, so that its connection
// may serve again, and closes it.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// sameOrigin reports whether u has the origin of the server's URL.
func sameOrigin(u *url.URL, server string) bool {
	s, err := url.Parse(server)
	return err == nil && strings.EqualFold(u.Scheme, s.Scheme) && strings.EqualFold(u.Host, s.Host)
}

// errNoGrant is authorize's way of saying that only the caller can go
// on: there is no Grant.
var errNoGrant = errors.New("auth: no grant")

// authorizeShared runs one authorization for all the requests refused
// meanwhile. The authorization runs apart from the request that started
// it (see GrantTimeout): a request that stops waiting leaves it running
// for the next.
func (a *Authorizer) authorizeShared(ctx context.Context, rf *refusal) (*Token, error) {
	a.mu.Lock()
	f := a.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		a.flight = f
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.grantTimeout())
		go func() {
			defer cancel()
			f.tok, f.err = a.authorize(gctx, rf)
			a.mu.Lock()
			a.flight = nil
			a.mu.Unlock()
			close(f.done)
		}()
	}
	a.mu.Unlock()
	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// authorize obtains a token after a refusal: it discovers the server's
// authorization server, takes a token another request or process
// obtained meanwhile, else refreshes the refused one, else runs the
// Grant, and stores what it got.
func (a *Authorizer) authorize(ctx context.Context, rf *refusal) (*Token, error) {
	if !rf.force && rf.status == http.StatusUnauthorized {
		// A token stored meanwhile (another process logged in) is for
		// this server: it was obtained after the server's discovery.
		if rec, err := a.store().Load(ctx, a.server()); err == nil && rec != nil && rec.Token != nil &&
			(rf.sent == nil || rec.Token.AccessToken != rf.sent.AccessToken) && !rec.Token.expired(time.Now()) {
			a.setToken(rec.Token)
			return rec.Token, nil
		}
	}
	canRefresh := rf.status == http.StatusUnauthorized && rf.sent != nil && rf.sent.RefreshToken != ""
	if a.Grant == nil && !canRefresh {
		return nil, errNoGrant // only the stored token, which was refused
	}
	d, err := a.discover(ctx, rf.challenges)
	if err != nil {
		if a.Grant == nil {
			a.log().Warn("auth: the refused token cannot be refreshed", "error", err)
			return nil, errNoGrant
		}
		return nil, err
	}
	want := rf.scopes()
	if !rf.force {
		if t := a.storedFor(ctx, d, rf, want); t != nil {
			return t, nil
		}
		if rf.status == http.StatusUnauthorized && rf.sent != nil && rf.sent.Issuer == d.issuer && rf.sent.RefreshToken != "" {
			if t, err := a.refresh(ctx, rf.sent); err == nil && t != nil && t.AccessToken != rf.sent.AccessToken {
				return t, nil
			} else if err != nil {
				a.log().Warn("auth: refreshing the refused token", "error", err)
			}
		}
	}
	if a.Grant == nil {
		return nil, errNoGrant
	}
	_, interactive := a.Grant.(*AuthorizationCode)
	f := &flow{a: a, d: d, scopes: a.scopesFor(d, want, rf.sent, interactive)}
	tok, err := a.Grant.obtain(ctx, f)
	if err != nil {
		return nil, err
	}
	err = a.store().Update(ctx, a.server(), func(r *Record) (*Record, error) {
		if r == nil {
			r = &Record{}
		}
		r.Token = tok
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	a.setToken(tok)
	a.log().Info("auth: obtained a token", "token", tok)
	return tok, nil
}

// storedFor returns the stored token when it is another than the one
// refused, from the authorization server now named, valid, and granted
// the scopes asked: another process obtained it meanwhile.
func (a *Authorizer) storedFor(ctx context.Context, d *discovery, rf *refusal, want []string) *Token {
	rec, err := a.store().Load(ctx, a.server())
	if err != nil || rec == nil || rec.Token == nil {
		return nil
	}
	t := rec.Token
	if (rf.sent != nil && t.AccessToken == rf.sent.AccessToken) || t.Issuer != d.issuer || t.expired(time.Now()) || !t.covers(want) {
		return nil
	}
	a.setToken(t)
	return t
}

// scopesFor chooses the scopes of an authorization (the specification's
// scope selection strategy): those the refusal asks for, else those
// configured, else those the server's metadata lists; with the scopes
// asked before from the same authorization server (a step-up keeps what
// was granted); with offline_access for a grant that gets refresh
// tokens, and only where the authorization server offers it.
func (a *Authorizer) scopesFor(d *discovery, want []string, sent *Token, refreshable bool) []string {
	s := want
	switch {
	case len(s) > 0:
		s = union(a.Scopes, s)
	case len(a.Scopes) > 0:
		s = a.Scopes
	case d.prm != nil:
		s = d.prm.ScopesSupported
	}
	if sent != nil && sent.Issuer == d.issuer {
		s = union(sent.Scopes, s)
	}
	offered := contains(d.as.ScopesSupported, metadata.ScopeOfflineAccess)
	if refreshable && offered && !a.SkipOfflineAccess {
		s = union(s, []string{metadata.ScopeOfflineAccess})
	}
	if !offered && contains(s, metadata.ScopeOfflineAccess) {
		kept := make([]string, 0, len(s))
		for _, x := range s {
			if x != metadata.ScopeOfflineAccess {
				kept = append(kept, x)
			}
		}
		s = kept
	}
	return s
}
