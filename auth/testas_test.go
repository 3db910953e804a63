package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// testAS is an authorization server and a protected resource for the
// tests, in one httptest server: metadata, dynamic registration, an
// authorization endpoint that approves at once, a token endpoint with
// PKCE, rotating refresh tokens and reuse detection (replaying a spent
// refresh token revokes its whole family, as real servers do), and a
// resource at /mcp that wants a token with the scopes of its request's
// X-Need-Scope header.
type testAS struct {
	t   *testing.T
	srv *httptest.Server

	mu      sync.Mutex
	meta    metadata.AuthorizationServer
	ttl     time.Duration
	codes   map[string]*grant
	access  map[string]*grant
	refresh map[string]*grant // by refresh token; spent ones stay, marked
	spent   map[string]bool
	revoked map[int]bool // families
	family  int
	// Counters and what the last requests carried.
	registrations, authorizations, refreshes, tokenRequests int
	resources                                               []string // the resource of each token request
	scopes                                                  []string // the scope of each authorization
}

type grant struct {
	client, redirect, challenge, resource string
	scopes                                []string
	family                                int
	expiry                                time.Time
}

func newTestAS(t *testing.T) *testAS {
	as := &testAS{t: t, ttl: time.Hour, codes: map[string]*grant{}, access: map[string]*grant{},
		refresh: map[string]*grant{}, spent: map[string]bool{}, revoked: map[int]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", as.prm)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", as.metadata)
	mux.HandleFunc("POST /register", as.register)
	mux.HandleFunc("GET /authorize", as.authorize)
	mux.HandleFunc("POST /token", as.token)
	mux.HandleFunc("/mcp", as.resource)
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	u := as.srv.URL
	as.meta = metadata.AuthorizationServer{
		Issuer:                                     u,
		AuthorizationEndpoint:                      u + "/authorize",
		TokenEndpoint:                              u + "/token",
		RegistrationEndpoint:                       u + "/register",
		CodeChallengeMethodsSupported:              []string{"S256"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		ScopesSupported:                            []string{"read", "write", "admin", "offline_access"},
		AuthorizationResponseIssParameterSupported: true,
	}
	return as
}

func (as *testAS) mcpURL() string { return as.srv.URL + "/mcp" }

func (as *testAS) prm(w http.ResponseWriter, r *http.Request) {
	writeTestJSON(w, 200, metadata.ProtectedResource{Resource: as.mcpURL(), AuthorizationServers: []string{as.srv.URL}, ScopesSupported: []string{"read"}})
}

func (as *testAS) metadata(w http.ResponseWriter, r *http.Request) {
	as.mu.Lock()
	m := as.meta
	as.mu.Unlock()
	writeTestJSON(w, 200, m)
}

func (as *testAS) register(w http.ResponseWriter, r *http.Request) {
	var c metadata.OAuthClient
	json.UnmarshalRead(r.Body, &c)
	as.mu.Lock()
	as.registrations++
	c.ClientID = fmt.Sprintf("client-%d", as.registrations)
	as.mu.Unlock()
	writeTestJSON(w, 201, c)
}

func (as *testAS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "PKCE and resource are required", 400)
		return
	}
	as.mu.Lock()
	as.authorizations++
	as.scopes = append(as.scopes, q.Get("scope"))
	code := fmt.Sprintf("code-%d", as.authorizations)
	var granted []string // what it supports of what was asked
	for _, s := range strings.Fields(q.Get("scope")) {
		if contains(as.meta.ScopesSupported, s) {
			granted = append(granted, s)
		}
	}
	as.codes[code] = &grant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"),
		resource: q.Get("resource"), scopes: granted}
	iss := as.meta.Issuer
	as.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", iss)
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (as *testAS) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	as.mu.Lock()
	defer as.mu.Unlock()
	as.tokenRequests++
	as.resources = append(as.resources, r.Form.Get("resource"))
	var g *grant
	switch r.Form.Get("grant_type") {
	case "authorization_code":
		g = as.codes[r.Form.Get("code")]
		delete(as.codes, r.Form.Get("code"))
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		if g == nil || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.Form.Get("redirect_uri") != g.redirect {
			writeTestJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		as.family++
		g.family = as.family
	case "refresh_token":
		as.refreshes++
		rt := r.Form.Get("refresh_token")
		g = as.refresh[rt]
		if g == nil || as.revoked[g.family] {
			writeTestJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
		if as.spent[rt] {
			// Reuse detection: the whole family goes.
			as.revoked[g.family] = true
			writeTestJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "refresh token reused"})
			return
		}
		as.spent[rt] = true
	default:
		writeTestJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	n := *g
	n.expiry = time.Now().Add(as.ttl)
	at := fmt.Sprintf("at-%d-%d", n.family, len(as.access))
	rt := fmt.Sprintf("rt-%d-%d", n.family, len(as.refresh))
	as.access[at] = &n
	as.refresh[rt] = &n
	writeTestJSON(w, 200, map[string]any{"access_token": at, "token_type": "Bearer", "refresh_token": rt,
		"expires_in": int(as.ttl / time.Second), "scope": strings.Join(n.scopes, " ")})
}

// resource answers 200 to a request with a valid token granted the
// scopes of X-Need-Scope; 401 or 403 with the spec's challenge otherwise.
func (as *testAS) resource(w http.ResponseWriter, r *http.Request) {
	prm := as.srv.URL + "/.well-known/oauth-protected-resource/mcp"
	need := strings.Fields(r.Header.Get("X-Need-Scope"))
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	as.mu.Lock()
	g := as.access[tok]
	valid := ok && g != nil && time.Now().Before(g.expiry) && !as.revoked[g.family] && g.resource == as.mcpURL()
	as.mu.Unlock()
	if !valid {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope=%q`, prm, "read"))
		w.WriteHeader(401)
		return
	}
	for _, s := range need {
		if !contains(g.scopes, s) {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(need, " "), prm))
			w.WriteHeader(403)
			return
		}
	}
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "ok %s", body)
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.MarshalWrite(w, v)
}

// headless plays a browser that follows nothing: the query of the
// authorization endpoint's redirect.
func headless(t *testing.T) func(ctx context.Context, authURL, redirect string) (url.Values, error) {
	return headlessVia(nil)
}

// headlessVia is headless on the transport rt (nil: the default one).
func headlessVia(rt http.RoundTripper) func(ctx context.Context, authURL, redirect string) (url.Values, error) {
	return func(ctx context.Context, authURL, redirect string) (url.Values, error) {
		hc := &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequestWithContext(ctx, "GET", authURL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusFound {
			return nil, fmt.Errorf("authorize answered %s", resp.Status)
		}
		return loc.Query(), nil
	}
}

// protect lets through the requests that carry a token of the test AS
// for resource; it refuses the others with 401 and the spec's challenge.
func (as *testAS) protect(resource string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		as.mu.Lock()
		g := as.access[tok]
		ok := g != nil && g.resource == resource && time.Now().Before(g.expiry)
		as.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer scope="read"`)
			w.WriteHeader(401)
			return
		}
		h.ServeHTTP(w, r)
	})
}
