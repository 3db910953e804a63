package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// An Authorizer obtains and keeps the tokens of one MCP server and puts
// them on the requests the server's HTTP transport makes (RoundTripper).
// It is safe for concurrent use. Its fields must not change once it is
// in use.
type Authorizer struct {
	// Server is the MCP endpoint, e.g. "https://mcp.example.com/mcp".
	// Empty means the URL of the first request the Authorizer sees. Only
	// requests to the server's origin carry its token.
	Server string
	// Grant obtains a token when the server refuses a request (401, or
	// 403 insufficient_scope). Nil means that only the stored token is
	// used (and refreshed): a refused request is returned as it is, for
	// the caller to run Login.
	Grant Grant
	// Clients are clients registered beforehand, used before any other
	// way of identifying the client (see Client).
	Clients []RegisteredClient
	// ClientMetadataURL is the HTTPS URL of the client's metadata
	// document, its client ID where the authorization server accepts
	// such documents. Empty means none.
	ClientMetadataURL string
	// ClientName is the name shown to users when the client registers
	// dynamically (default "ferry").
	ClientName string
	// Scopes are asked for in every authorization, beside those the
	// server asks for. Empty means the server's choice: the scopes of its
	// challenge, else those its metadata lists, else none.
	Scopes []string
	// SkipOfflineAccess stops the authorization code grant from asking
	// for offline_access (a refresh token) where the authorization server
	// offers it.
	SkipOfflineAccess bool
	// DPoP asks for tokens bound to a key of the client (RFC 9449) where
	// the authorization server issues them.
	DPoP bool
	// Store keeps the tokens and registrations. Nil means in memory.
	Store Store
	// HTTPClient makes the requests for metadata, registrations and
	// tokens. Nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// MaxAuthorizations bounds the authorizations one request may start
	// (a server that keeps asking for scopes it never accepts); default 3.
	MaxAuthorizations int
	// GrantTimeout bounds one authorization, a user's login included
	// (default 5 minutes). An authorization runs to its end even when the
	// request that started it gives up, so that the next request finds
	// its token instead of sending the user to log in again.
	GrantTimeout time.Duration
	// InsecureHTTP allows http:// authorization servers and metadata
	// elsewhere than on this machine. Never use it beyond a test.
	InsecureHTTP bool
	// Logger receives diagnostics, never a secret. Nil discards them.
	Logger *slog.Logger

	mu        sync.Mutex
	serverURL string
	loaded    bool
	tok       *Token // the token requests carry
	flight    *flight
	asCache   map[string]cachedAS
	dp        *dpop
	mem       MemoryStore
	defaultHC *http.Client
}

// flight is one authorization in progress, shared by the requests that
// wait for it.
type flight struct {
	done chan struct{}
	tok  *Token
	err  error
}

// ErrNoGrant is returned by Login on an Authorizer without a Grant.
var ErrNoGrant = errors.New("auth: no grant to obtain a token with")

func (a *Authorizer) server() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.serverURL == "" {
		a.serverURL = a.Server
	}
	return a.serverURL
}

// learnServer sets the server's URL from the first request when Server
// is empty.
func (a *Authorizer) learnServer(u *url.URL) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.serverURL == "" {
		if a.Server != "" {
			a.serverURL = a.Server
			return
		}
		c := *u
		c.RawQuery, c.Fragment = "", ""
		a.serverURL = c.String()
	}
}

func (a *Authorizer) store() Store {
	if a.Store != nil {
		return a.Store
	}
	return &a.mem
}

func (a *Authorizer) httpClient() *http.Client {
	if a.HTTPClient != nil {
		return a.HTTPClient
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.defaultHC == nil {
		a.defaultHC = &http.Client{Timeout: 30 * time.Second}
	}
	return a.defaultHC
}

func (a *Authorizer) log() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (a *Authorizer) clientName() string {
	return firstOf(a.ClientName, "ferry")
}

func (a *Authorizer) maxAuthorizations() int {
	if a.MaxAuthorizations > 0 {
		return a.MaxAuthorizations
	}
	return 3
}

func (a *Authorizer) grantTimeout() time.Duration {
	if a.GrantTimeout > 0 {
		return a.GrantTimeout
	}
	return 5 * time.Minute
}

// tokenClient returns the HTTP client of token requests to as (see
// postClient): with DPoP proofs when the Authorizer asks for DPoP and as
// issues bound tokens.
func (a *Authorizer) tokenClient(ctx context.Context, as *metadata.AuthorizationServer) (*http.Client, error) {
	hc := a.postClient("token", true)
	if !a.DPoP || !dpopSupported(as) {
		return hc, nil
	}
	d, err := a.dpopKey(ctx)
	if err != nil {
		return nil, err
	}
	hc.Transport = &dpopTransport{d: d, base: hc.Transport}
	return hc, nil
}

// dpopKey returns the DPoP key, the stored one or a new one stored.
func (a *Authorizer) dpopKey(ctx context.Context) (*dpop, error) {
	a.mu.Lock()
	d := a.dp
	a.mu.Unlock()
	if d != nil {
		return d, nil
	}
	err := a.store().Update(ctx, a.server(), func(r *Record) (*Record, error) {
		if r == nil {
			r = &Record{}
		}
		var stored []byte
		var err error
		d, stored, err = newDPoP(r.DPoPKey)
		r.DPoPKey = stored
		return r, err
	})
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.dp == nil {
		a.dp = d
	}
	return a.dp, nil
}

// loadedDPoP returns the DPoP key once dpopKey loaded it.
func (a *Authorizer) loadedDPoP() *dpop {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.dp
}

// current returns the token to send, loading it from the store the
// first time and refreshing it when it expired.
func (a *Authorizer) current(ctx context.Context) *Token {
	a.mu.Lock()
	loaded, tok := a.loaded, a.tok
	a.mu.Unlock()
	if !loaded {
		rec, err := a.store().Load(ctx, a.server())
		if err != nil {
			a.log().Warn("auth: reading the stored token", "error", err)
		}
		a.mu.Lock()
		if !a.loaded {
			a.loaded = true
			if rec != nil {
				a.tok = rec.Token
			}
		}
		tok = a.tok
		a.mu.Unlock()
	}
	if tok != nil && tok.expired(time.Now()) {
		t, err := a.refresh(ctx, tok)
		if err != nil {
			a.log().Warn("auth: refreshing the token", "error", err)
		}
		return t
	}
	return tok
}

func (a *Authorizer) setToken(t *Token) {
	a.mu.Lock()
	a.tok = t
	a.loaded = true
	a.mu.Unlock()
}

// refresh replaces old, expired or refused, by a new token: under the
// store's lock, it reads the stored token again (another process may
// have refreshed it already: then that one is used) and spends the
// refresh token of the stored one, so that no refresh token is spent
// twice. A refresh token the authorization server refuses (invalid_grant)
// is forgotten, with its token; one that changed meanwhile is not
// touched. It returns nil when no token can be had without a new
// authorization.
func (a *Authorizer) refresh(ctx context.Context, old *Token) (*Token, error) {
	var out *Token
	err := a.store().Update(ctx, a.server(), func(r *Record) (*Record, error) {
		if r == nil || r.Token == nil {
			return r, nil
		}
		cur := r.Token
		if cur.AccessToken != old.AccessToken && !cur.expired(time.Now()) {
			out = cur // refreshed by someone else
			return r, nil
		}
		if cur.RefreshToken == "" {
			return r, nil
		}
		t, err := a.postRefresh(ctx, r, cur)
		var te *TokenError
		if errors.As(err, &te) && te.Code == "invalid_grant" {
			a.log().Info("auth: the refresh token was refused; a new authorization is needed", "issuer", cur.Issuer)
			r.Token = nil
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		r.Token, out = t, t
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	a.setToken(out)
	return out, nil
}

// postRefresh spends t's refresh token (RFC 6749 §6), with the resource
// parameter and, for a DPoP-bound token, a proof. rec is t's record, as
// the store's Update holds it.
func (a *Authorizer) postRefresh(ctx context.Context, rec *Record, t *Token) (*Token, error) {
	as, _, err := a.authorizationServer(ctx, t.Issuer, false)
	if err != nil {
		return nil, err
	}
	auth, ok := a.knownClient(rec, t.Issuer, t.ClientID)
	if !ok {
		return nil, fmt.Errorf("auth: the client %s that the token was issued to is not known any more", t.ClientID)
	}
	f := &flow{a: a, d: &discovery{resource: t.Resource, issuer: t.Issuer, as: as}, scopes: t.Scopes}
	nt, err := f.token(ctx, auth, map[string][]string{
		"grant_type":    {metadata.GrantRefreshToken},
		"refresh_token": {t.RefreshToken},
	})
	if err != nil {
		return nil, err
	}
	if len(nt.Granted) == 0 {
		nt.Granted = t.Granted
	}
	a.log().Info("auth: refreshed the token", "issuer", t.Issuer, "rotated", nt.RefreshToken != t.RefreshToken)
	return nt, nil
}

// knownClient finds the client a token was issued to: a pre-registered
// one, the client ID metadata document, a registration of rec, or the
// grant's own client. It takes the record rather than loading it: it
// runs within the store's Update, and a MemoryStore's lock is not
// reentrant.
func (a *Authorizer) knownClient(rec *Record, issuer, id string) (clientAuth, bool) {
	for _, c := range a.Clients {
		if c.ID == id && (c.Issuer == "" || c.Issuer == issuer) {
			return clientAuth{id: c.ID, secret: c.Secret, method: firstOf(c.AuthMethod, chooseAuthMethod(nil, c.Secret != ""))}, true
		}
	}
	if id != "" && id == a.ClientMetadataURL {
		return clientAuth{id: id, method: metadata.AuthNone}, true
	}
	if rec != nil {
		if reg := rec.Clients[issuer]; reg != nil && reg.ClientID == id {
			return clientAuth{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, true
		}
	}
	if g, ok := a.Grant.(ownClient); ok && g.client().id == id {
		return g.client(), true
	}
	return clientAuth{}, false
}
