package resourceserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/intercept"
)

// Introspection verifies tokens by asking the authorization server
// (token introspection, RFC 7662): for opaque tokens, or to learn at
// once of a revoked one. An active token must name the resource in its
// audience, and when the answer has no aud, the token is refused unless
// AllowMissingAudience: the MCP specification requires the resource to
// check that a token was issued for it. Answers are kept for CacheTTL
// (and never beyond the token's expiry), refusals for at most 5 seconds,
// each for the token and the audience it was presented to. At most
// MaxConcurrent introspections run at once, and after the endpoint fails
// none is made for a while (1 s, doubling to 30 s while it keeps
// failing): tokens are then refused with 503 without asking it.
type Introspection struct {
	// Endpoint is the introspection endpoint. Empty means the
	// introspection_endpoint of Issuer's metadata.
	Endpoint string
	// Issuer is the authorization server; when set, an answer naming
	// another issuer is refused.
	Issuer string
	// Audience, when set, is the audience the authorization server names
	// this server with, when that is not its resource identifier (some
	// servers name the client the token was issued to, or an API
	// identifier of their own).
	Audience string
	// ClientID and ClientSecret authenticate the resource server to the
	// endpoint (HTTP Basic).
	ClientID     string
	ClientSecret string
	// AllowMissingAudience accepts active tokens whose answer has no aud
	// (for authorization servers that issue tokens for one resource only).
	AllowMissingAudience bool
	// CacheTTL is how long an answer is kept (default 30 s, and at most
	// 5 s for a refusal; negative: not at all).
	CacheTTL time.Duration
	// MaxConcurrent bounds the introspection requests in flight (default
	// 8); tokens beyond wait for one to end.
	MaxConcurrent int
	// HTTPClient makes the requests; nil means one with a 10 s timeout.
	HTTPClient *http.Client

	mu       sync.Mutex
	endpoint string
	accepted map[[32]byte]cached // by tokenKey
	refused  map[[32]byte]cached // by tokenKey, apart, so that refused tokens do not evict accepted ones
	slots    chan struct{}       // one per request in flight
	// retryAt is when the endpoint may be asked again after it failed
	// with down; backoff is that wait, doubled by each failure after it.
	retryAt time.Time
	down    error
	backoff time.Duration
}

type cached struct {
	caller *intercept.Caller
	err    error
	until  time.Time
}

const (
	maxCached = 10_000
	// refusedTTL bounds how long a refusal is kept: a token introspected
	// before the authorization server knew of it is accepted soon after.
	refusedTTL = 5 * time.Second
	// firstBackoff and maxBackoff bound the wait after the endpoint fails.
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
)

// Verify asks the authorization server about token, unless its answer
// for the token and audience is known.
func (v *Introspection) Verify(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	if v.Audience != "" {
		audience = v.Audience
	}
	key := tokenKey(audience, token)
	if c, ok := v.cached(key); ok {
		return c.caller, c.err
	}
	release, err := v.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if c, ok := v.cached(key); ok {
		return c.caller, c.err // answered while this one waited
	}
	if err := v.unavailable(); err != nil {
		return nil, err
	}
	caller, err := v.introspect(ctx, token, audience)
	v.record(ctx, key, caller, err)
	return caller, err
}

func (v *Introspection) cached(key [32]byte) (cached, bool) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.accepted[key]; ok && now.Before(c.until) {
		return c, true
	}
	if c, ok := v.refused[key]; ok && now.Before(c.until) {
		return c, true
	}
	return cached{}, false
}

// acquire waits for a request slot; release gives it back.
func (v *Introspection) acquire(ctx context.Context) (release func(), err error) {
	v.mu.Lock()
	if v.slots == nil {
		n := v.MaxConcurrent
		if n <= 0 {
			n = 8
		}
		v.slots = make(chan struct{}, n)
	}
	slots := v.slots
	v.mu.Unlock()
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// unavailable returns the endpoint's failure while it is not to be asked.
func (v *Introspection) unavailable() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.down != nil && time.Now().Before(v.retryAt) {
		return fmt.Errorf("resourceserver: introspection unavailable until %s: %w", v.retryAt.Format(time.RFC3339), v.down)
	}
	return nil
}

// record keeps the answer about the token of key: an answer, or a
// refusal, for a while; a failure of the endpoint holds requests back.
func (v *Introspection) record(ctx context.Context, key [32]byte, caller *intercept.Caller, err error) {
	now := time.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	if err != nil && !isInvalid(err) {
		// Neither the client's going away nor the other failures of
		// requests made at once count.
		if ctx.Err() == nil && !now.Before(v.retryAt) {
			v.backoff = min(max(2*v.backoff, firstBackoff), maxBackoff)
			v.down, v.retryAt = err, now.Add(v.backoff)
		}
		return // not kept: the server may answer next time
	}
	v.down, v.backoff, v.retryAt = nil, 0, time.Time{}
	ttl := v.CacheTTL
	if ttl == 0 {
		ttl = 30 * time.Second
	}
	if ttl < 0 {
		return
	}
	if err != nil {
		v.refused = keep(v.refused, key, cached{nil, err, now.Add(min(ttl, refusedTTL))})
		return
	}
	until := now.Add(ttl)
	if !caller.Expiry.IsZero() && caller.Expiry.Before(until) {
		until = caller.Expiry
	}
	v.accepted = keep(v.accepted, key, cached{caller, nil, until})
}

// keep adds c to m, which starts over rather than grow beyond maxCached.
func keep(m map[[32]byte]cached, key [32]byte, c cached) map[[32]byte]cached {
	if m == nil || len(m) >= maxCached {
		m = map[[32]byte]cached{}
	}
	m[key] = c
	return m
}

func isInvalid(err error) bool {
	_, ok := err.(*reasonError)
	return ok
}

func (v *Introspection) client() *http.Client {
	if v.HTTPClient != nil {
		return v.HTTPClient
	}
	return &http.Client{Timeout: 10 * time.Second}
}

func (v *Introspection) introspect(ctx context.Context, token, audience string) (*intercept.Caller, error) {
	endpoint, err := v.endpointURL(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if v.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(v.ClientID), url.QueryEscape(v.ClientSecret))
	}
	resp, err := v.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("resourceserver: introspection: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("resourceserver: introspection answered %s", resp.Status)
	}
	var ans map[string]any
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("resourceserver: introspection: %w", err)
	}
	if active, _ := ans["active"].(bool); !active {
		return nil, invalid("the token is not active", nil)
	}
	str := func(k string) string { s, _ := ans[k].(string); return s }
	if v.Issuer != "" && str("iss") != "" && str("iss") != v.Issuer {
		return nil, invalid("the token comes from another issuer", nil)
	}
	var auds []string
	switch a := ans["aud"].(type) {
	case string:
		auds = []string{a}
	case []any:
		for _, x := range a {
			if s, ok := x.(string); ok {
				auds = append(auds, s)
			}
		}
	}
	if len(auds) == 0 && !v.AllowMissingAudience {
		return nil, invalid("the token names no audience", nil)
	}
	if len(auds) > 0 && !contains(auds, audience) {
		return nil, invalid("the token was issued for another resource", nil)
	}
	c := &intercept.Caller{Subject: str("sub"), ClientID: str("client_id"), Issuer: str("iss"), Scopes: strings.Fields(str("scope")), Claims: ans}
	c.ID, c.Roles = callerID(c), stringsOf(ans["roles"])
	if exp, ok := ans["exp"].(float64); ok {
		c.Expiry = time.Unix(int64(exp), 0)
		if time.Now().After(c.Expiry) {
			return nil, invalid("the token expired", nil)
		}
	}
	if ans["cnf"] != nil {
		return nil, invalid("the token is bound to a key and cannot be used as a bearer token here", nil)
	}
	return c, nil
}

func (v *Introspection) endpointURL(ctx context.Context) (string, error) {
	v.mu.Lock()
	e := firstOf(v.endpoint, v.Endpoint)
	v.mu.Unlock()
	if e != "" {
		return e, nil
	}
	if v.Issuer == "" {
		return "", fmt.Errorf("resourceserver: Introspection needs an Endpoint or an Issuer")
	}
	as, err := discoverAS(ctx, v.client(), v.Issuer)
	if err != nil {
		return "", err
	}
	if as.IntrospectionEndpoint == "" {
		return "", fmt.Errorf("resourceserver: %s publishes no introspection endpoint", v.Issuer)
	}
	v.mu.Lock()
	v.endpoint = as.IntrospectionEndpoint
	v.mu.Unlock()
	return as.IntrospectionEndpoint, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
