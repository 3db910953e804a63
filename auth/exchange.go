package auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/auth/metadata"
	"github.com/ferrymcp/ferry/intercept"
)

// TokenTypeAccessToken is the token type (RFC 8693 §3) of an OAuth access
// token.
const TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"

// TokenExchange is the token exchange grant (RFC 8693): the client
// presents another party's token (the subject token: a gateway's
// caller's, say) and obtains a token of the server's to act for that
// party, authenticating itself with its ID and secret. The resource
// parameter (the server) is always sent; Audience, when set, too.
type TokenExchange struct {
	ClientID     string
	ClientSecret string
	// AuthMethod forces a token endpoint authentication method; empty
	// means one the authorization server supports.
	AuthMethod string
	// SubjectToken is the token exchanged, of SubjectTokenType (default
	// an access token).
	SubjectToken     string
	SubjectTokenType string
	Audience         string
}

func (g *TokenExchange) client() clientAuth {
	return clientAuth{id: g.ClientID, secret: g.ClientSecret, method: g.AuthMethod}
}

func (g *TokenExchange) obtain(ctx context.Context, f *flow) (*Token, error) {
	if g.SubjectToken == "" {
		return nil, errors.New("auth: a token exchange without a subject token")
	}
	c := g.client()
	if c.method == "" {
		c.method = chooseAuthMethod(f.d.as.TokenEndpointAuthMethodsSupported, g.ClientSecret != "")
	}
	params := url.Values{
		"grant_type":           {metadata.GrantTokenExchange},
		"subject_token":        {g.SubjectToken},
		"subject_token_type":   {cmp.Or(g.SubjectTokenType, TokenTypeAccessToken)},
		"requested_token_type": {TokenTypeAccessToken},
	}
	if g.Audience != "" {
		params.Set("audience", g.Audience)
	}
	setScope(params, f.scopes)
	return f.token(ctx, c, params)
}

type subjectKey struct{}

// subject is a caller's token, with when it expires.
type subject struct {
	token  string
	expiry time.Time
}

// WithSubjectToken returns ctx carrying token, the access token of the
// request whose context ctx is, which an [Exchanger] exchanges to act for
// the request's caller at another server. The authentication that checks
// the token is what lets the request through (set it around that
// authentication), and the context never reaches a log: the token is a
// secret.
func WithSubjectToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, subjectKey{}, token)
}

// subjectOf returns the subject token of ctx, with the expiry of its
// caller (zero when unknown).
func subjectOf(ctx context.Context) (subject, bool) {
	tok, _ := ctx.Value(subjectKey{}).(string)
	s := subject{token: tok}
	if c, ok := intercept.CallerFrom(ctx); ok {
		s.expiry = c.Expiry
	}
	return s, tok != ""
}

// An Exchanger acts for each caller of a gateway at one server: a
// request whose context carries the caller's token ([WithSubjectToken])
// goes with a token of the server's obtained for that caller by token
// exchange (RFC 8693), never with the caller's own token; a request
// without one (the connection's setup) goes through the fallback given
// to RoundTripper. Each
// caller's token has an [Authorizer] of its own, which exchanges it on
// the server's first refusal (401, whose challenge names the
// authorization server), once for the requests that wait meanwhile, and
// again when the server refuses the token obtained.
type Exchanger struct {
	// Server is the MCP endpoint.
	Server string
	// ClientID and ClientSecret are the gateway's client at the server's
	// authorization server.
	ClientID     string
	ClientSecret string
	// Audience is sent in each exchange when set; Scopes are asked for.
	Audience string
	Scopes   []string
	// MaxCallers bounds the callers' tokens kept at once (default
	// 10,000); beyond it, those that expired are forgotten first.
	MaxCallers   int
	HTTPClient   *http.Client
	InsecureHTTP bool
	Logger       *slog.Logger

	mu      sync.Mutex
	callers map[[sha256.Size]byte]*exchanged
}

// exchanged is the Authorizer of one caller's token.
type exchanged struct {
	a      *Authorizer
	expiry time.Time
}

// RoundTripper returns the RoundTripper of the server's requests over
// base (nil: http.DefaultTransport); the requests without a caller's
// token go through fallback (nil: base, without a token).
func (e *Exchanger) RoundTripper(base, fallback http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &exchangeTripper{e: e, base: base, fallback: cmp.Or(fallback, base)}
}

type exchangeTripper struct {
	e              *Exchanger
	base, fallback http.RoundTripper
}

func (t *exchangeTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	s, ok := subjectOf(req.Context())
	if !ok {
		return t.fallback.RoundTrip(req)
	}
	return t.e.authorizer(s).RoundTripper(t.base).RoundTrip(req)
}

// authorizer returns the Authorizer of s, made on its first request.
func (e *Exchanger) authorizer(s subject) *Authorizer {
	key := sha256.Sum256([]byte(s.token))
	e.mu.Lock()
	defer e.mu.Unlock()
	if x := e.callers[key]; x != nil {
		return x.a
	}
	if e.callers == nil {
		e.callers = map[[sha256.Size]byte]*exchanged{}
	}
	e.forget(time.Now())
	a := &Authorizer{
		Server: e.Server,
		Grant: &TokenExchange{ClientID: e.ClientID, ClientSecret: e.ClientSecret,
			SubjectToken: s.token, Audience: e.Audience},
		Scopes:       e.Scopes,
		Store:        &MemoryStore{},
		HTTPClient:   e.HTTPClient,
		InsecureHTTP: e.InsecureHTTP,
		Logger:       e.Logger,
	}
	e.callers[key] = &exchanged{a: a, expiry: s.expiry}
	return a
}

// forget makes room for a caller: the tokens that expired go, and, at
// the bound still, any others.
func (e *Exchanger) forget(now time.Time) {
	limit := e.MaxCallers
	if limit <= 0 {
		limit = 10000
	}
	if len(e.callers) < limit {
		return
	}
	for k, x := range e.callers {
		if !x.expiry.IsZero() && now.After(x.expiry) {
			delete(e.callers, k)
		}
	}
	for k := range e.callers {
		if len(e.callers) < limit {
			break
		}
		delete(e.callers, k)
	}
}

// String names the Exchanger without a secret.
func (e *Exchanger) String() string {
	return fmt.Sprintf("token exchange for %s as client %s", e.Server, e.ClientID)
}
