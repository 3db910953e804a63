package resourceserver

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
)

// JWT verifies JWT access tokens (RFC 9068) with the keys the
// authorization server publishes (its JWKS): the signature, the issuer,
// the audience (the resource the token is presented to), the expiry and
// not-before, with Leeway for clocks that differ. Keys are fetched once
// and again when a token names a key not seen yet (the server rotated
// its keys), at most every MinRefresh, and after a failed fetch at most
// every few seconds: tokens, however many, never make the server hammer
// the authorization server. One fetch runs at a time, and the tokens
// waiting for it share its answer; tokens signed with a known key do not
// wait for it.
type JWT struct {
	// Issuer is the authorization server's issuer identifier, compared
	// with the token's iss as a string. Required.
	Issuer string
	// Audience, when set, is the audience the authorization server names
	// this server with in its tokens, when that is not the server's
	// resource identifier (an API identifier of the authorization
	// server's own naming).
	Audience string
	// JWKSURL is the address of the keys. Empty means the jwks_uri of
	// the authorization server's metadata, found from Issuer.
	JWKSURL string
	// Algorithms are those accepted (default RS256, RS384, RS512, PS256,
	// PS384, PS512, ES256, ES384, ES512, EdDSA; never "none" nor HMAC).
	Algorithms []string
	// Leeway is the clock difference tolerated (default 1 minute).
	Leeway time.Duration
	// MinRefresh bounds how often the keys are fetched again for an
	// unknown key (default 1 minute), so that tokens naming made-up keys
	// do not make the server hammer the authorization server. After a
	// failed fetch, the next waits the shorter of MinRefresh and 5
	// seconds.
	MinRefresh time.Duration
	// HTTPClient fetches the keys; nil means one with a 10 s timeout.
	HTTPClient *http.Client

	// mu guards the keys and the fetches' bookkeeping; it is never held
	// during a fetch.
	mu       sync.Mutex
	keys     *jose.JSONWebKeySet
	fetched  time.Time // when the last fetch started
	failed   error     // the last fetch's error, nil when it succeeded
	inflight *keyFetch // the fetch running, if any
	jwksURL  string    // used by one fetch at a time

	// verified keeps the tokens verified, until they expire: a client
	// sends the same token for an hour, and checking its signature costs
	// far more than the rest of a request.
	cmu      sync.RWMutex
	verified map[[32]byte]*intercept.Caller
}

// maxVerified bounds the verified tokens kept; beyond, the cache starts
// over.
const maxVerified = 10_000

var defaultAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// accessClaims are the claims of an access token beyond the registered
// ones: RFC 9068's scope and client_id, and the forms other servers use
// (scp as a list, azp for the client).
type accessClaims struct {
	Scope    string `json:"scope"`
	SCP      any    `json:"scp"`
	ClientID string `json:"client_id"`
	AZP      string `json:"azp"`
	CNF      any    `json:"cnf"`
}

// Verify checks a JWT access token for the resource audience.
func (v *JWT) Verify(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	if v.Audience != "" {
		audience = v.Audience
	}
	key := tokenKey(audience, token)
	v.cmu.RLock()
	c := v.verified[key]
	v.cmu.RUnlock()
	if c != nil && time.Now().Before(c.Expiry.Add(v.leeway())) {
		return c, nil
	}
	c, err := v.verify(ctx, token, audience)
	if err != nil {
		return nil, err
	}
	v.cmu.Lock()
	if v.verified == nil || len(v.verified) >= maxVerified {
		v.verified = map[[32]byte]*intercept.Caller{}
	}
	v.verified[key] = c
	v.cmu.Unlock()
	return c, nil
}

func (v *JWT) leeway() time.Duration {
	if v.Leeway == 0 {
		return time.Minute
	}
	return v.Leeway
}

func (v *JWT) verify(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	algs := defaultAlgorithms
	if len(v.Algorithms) > 0 {
		algs = make([]jose.SignatureAlgorithm, len(v.Algorithms))
		for i, a := range v.Algorithms {
			algs[i] = jose.SignatureAlgorithm(a)
		}
	}
	tok, err := jwt.ParseSigned(token, algs)
	if err != nil {
		return nil, invalid("the token is not a signed JWT of an accepted algorithm", err)
	}
	h := tok.Headers[0]
	if typ, _ := h.ExtraHeaders["typ"].(string); typ != "" && !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") && !strings.EqualFold(typ, "JWT") {
		return nil, invalid("the token is not an access token (typ "+typ+")", nil)
	}
	key, err := v.key(ctx, h.KeyID, h.Algorithm)
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	var extra accessClaims
	all := map[string]any{}
	if err := tok.Claims(key, &std, &extra, &all); err != nil {
		return nil, invalid("the token's signature does not verify", err)
	}
	leeway := v.leeway()
	if std.Expiry == nil {
		return nil, invalid("the token has no expiry", nil)
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: v.Issuer, AnyAudience: jwt.Audience{audience}, Time: time.Now()}, leeway)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return nil, invalid("the token expired", nil)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, invalid("the token was issued for another resource", nil)
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, invalid("the token comes from another issuer", nil)
	case err != nil:
		return nil, invalid("the token is not valid now", err)
	}
	if extra.CNF != nil {
		// A sender-constrained token (DPoP, mTLS) sent as a bearer token:
		// accepting it would undo its binding.
		return nil, invalid("the token is bound to a key and cannot be used as a bearer token here", nil)
	}
	c := &intercept.Caller{Subject: std.Subject, ClientID: firstOf(extra.ClientID, extra.AZP), Issuer: std.Issuer, Claims: all,
		Scopes: strings.Fields(extra.Scope), Expiry: std.Expiry.Time()}
	switch s := extra.SCP.(type) {
	case string:
		c.Scopes = union(c.Scopes, strings.Fields(s))
	case []any:
		c.Scopes = union(c.Scopes, stringsOf(s))
	}
	c.ID, c.Roles = callerID(c), stringsOf(all["roles"])
	return c, nil
}

// tokenKey is the key of what is cached about a token presented to
// audience: a digest, so that the tokens themselves are not kept, of both,
// so that a token accepted for one resource is not for another.
func tokenKey(audience, token string) [32]byte {
	h := sha256.New()
	io.WriteString(h, audience)
	h.Write([]byte{0})
	io.WriteString(h, token)
	var key [32]byte
	h.Sum(key[:0])
	return key
}

// keyFetch is one fetch of the keys, whose answer every token waiting
// for it shares.
type keyFetch struct {
	done chan struct{}
	keys *jose.JSONWebKeySet // the keys known once it ended
	err  error
}

const (
	// retryAfterFailure bounds how often the keys are fetched after a
	// failed fetch (when MinRefresh is longer).
	retryAfterFailure = 5 * time.Second
	// fetchTimeout bounds a fetch, which outlives the request that
	// started it when others wait for it.
	fetchTimeout = 10 * time.Second
)

// key returns the public key named kid (any key of alg when the token
// names none), fetching the keys when it is not known.
func (v *JWT) key(ctx context.Context, kid, alg string) (any, error) {
	v.mu.Lock()
	if k := find(v.keys, kid, alg); k != nil {
		v.mu.Unlock()
		return k, nil
	}
	f, err := v.startFetch(ctx)
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case <-f.done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if k := find(f.keys, kid, alg); k != nil {
		return k, nil
	}
	if f.err != nil && f.keys == nil {
		return nil, f.err
	}
	// The keys known still serve; this token's is not among them.
	return nil, invalid("the token is signed with an unknown key", f.err)
}

// startFetch returns the fetch running, or starts one unless the last
// started too recently: then a token with an unknown key is invalid, or,
// while no key is known, the last fetch's error stands. v.mu is held.
func (v *JWT) startFetch(ctx context.Context) (*keyFetch, error) {
	if v.inflight != nil {
		return v.inflight, nil
	}
	wait := v.MinRefresh
	if wait <= 0 {
		wait = time.Minute
	}
	if v.failed != nil {
		wait = min(wait, retryAfterFailure)
	}
	if !v.fetched.IsZero() && time.Since(v.fetched) < wait {
		if v.keys == nil {
			return nil, v.failed
		}
		return nil, invalid("the token is signed with an unknown key", nil)
	}
	f := &keyFetch{done: make(chan struct{})}
	v.inflight, v.fetched = f, time.Now()
	go v.run(context.WithoutCancel(ctx), f)
	return f, nil
}

// run fetches the keys for f and everyone waiting for it.
func (v *JWT) run(ctx context.Context, f *keyFetch) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	keys, err := v.fetch(ctx)
	v.mu.Lock()
	if err == nil {
		v.keys = keys
	}
	v.failed, v.inflight = err, nil
	f.keys, f.err = v.keys, err
	v.mu.Unlock()
	close(f.done)
}

func find(set *jose.JSONWebKeySet, kid, alg string) any {
	if set == nil {
		return nil
	}
	for _, k := range set.Keys {
		if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			continue
		}
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		return k.Key
	}
	return nil
}

func (v *JWT) client() *http.Client {
	if v.HTTPClient != nil {
		return v.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// fetch reads the key set, finding its address first when need be.
func (v *JWT) fetch(ctx context.Context) (*jose.JSONWebKeySet, error) {
	if v.jwksURL == "" {
		v.jwksURL = v.JWKSURL
	}
	if v.jwksURL == "" {
		as, err := discoverAS(ctx, v.client(), v.Issuer)
		if err != nil {
			return nil, err
		}
		if as.JWKSURI == "" {
			return nil, fmt.Errorf("resourceserver: the authorization server %s publishes no jwks_uri", v.Issuer)
		}
		v.jwksURL = as.JWKSURI
	}
	var set jose.JSONWebKeySet
	if err := getJSON(ctx, v.client(), v.jwksURL, &set); err != nil {
		return nil, fmt.Errorf("resourceserver: the authorization server's keys: %w", err)
	}
	return &set, nil
}

// discoverAS fetches the metadata of the authorization server issuer,
// at the addresses of the MCP specification, and checks its issuer.
func discoverAS(ctx context.Context, hc *http.Client, issuer string) (*metadata.AuthorizationServer, error) {
	urls, err := metadata.AuthorizationServerURLs(issuer)
	if err != nil {
		return nil, err
	}
	var last error
	for _, u := range urls {
		var as metadata.AuthorizationServer
		if err := getJSON(ctx, hc, u, &as); err != nil {
			last = err
			continue
		}
		if as.Issuer != issuer {
			last = fmt.Errorf("the metadata at %s is for the issuer %q", u, as.Issuer)
			continue
		}
		return &as, nil
	}
	return nil, fmt.Errorf("resourceserver: the metadata of %s: %w", issuer, last)
}

func getJSON(ctx context.Context, hc *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
