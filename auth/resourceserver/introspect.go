package resourceserver

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
)

// Introspection verifies tokens by asking the authorization server
// (token introspection, RFC 7662): for opaque tokens, or to learn at
// once of a revoked one. An active token must name the resource in its
// audience, and when the answer has no aud, the token is refused unless
// AllowMissingAudience: the MCP specification requires the resource to
// check that a token was issued for it. Answers are kept for CacheTTL
// (and never beyond the token's expiry).
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
	// CacheTTL is how long an answer is kept (default 30 s; negative:
	// not at all).
	CacheTTL time.Duration
	// HTTPClient makes the requests; nil means one with a 10 s timeout.
	HTTPClient *http.Client

	mu       sync.Mutex
	endpoint string
	cache    map[[32]byte]cached
}

type cached struct {
	caller *Caller
	err    error
	until  time.Time
}

const maxCached = 10_000

// Verify asks the authorization server about token.
func (v *Introspection) Verify(ctx context.Context, token, audience string) (*Caller, error) {
	if v.Audience != "" {
		audience = v.Audience
	}
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	v.mu.Lock()
	if c, ok := v.cache[key]; ok && now.Before(c.until) {
		v.mu.Unlock()
		return c.caller, c.err
	}
	v.mu.Unlock()
	caller, err := v.introspect(ctx, token, audience)
	if err != nil && !isInvalid(err) {
		return nil, err // not kept: the server may answer next time
	}
	ttl := v.CacheTTL
	if ttl == 0 {
		ttl = 30 * time.Second
	}
	if ttl > 0 {
		until := now.Add(ttl)
		if caller != nil && !caller.Expiry.IsZero() && caller.Expiry.Before(until) {
			until = caller.Expiry
		}
		v.mu.Lock()
		if v.cache == nil || len(v.cache) >= maxCached {
			v.cache = map[[32]byte]cached{}
		}
		v.cache[key] = cached{caller, err, until}
		v.mu.Unlock()
	}
	return caller, err
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

func (v *Introspection) introspect(ctx context.Context, token, audience string) (*Caller, error) {
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
	c := &Caller{Subject: str("sub"), ClientID: str("client_id"), Issuer: str("iss"), Scopes: strings.Fields(str("scope")), Claims: ans}
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
