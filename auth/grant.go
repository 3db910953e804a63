package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// A Grant obtains a token from an authorization server (RFC 6749 §1.3):
// *AuthorizationCode (a user logs in), *ClientCredentials (the client
// acts on its own behalf), *JWTBearer (a workload identity) or
// *EnterpriseManaged (an enterprise identity provider vouches for the
// user).
type Grant interface {
	// obtain asks the authorization server of f for a token.
	obtain(ctx context.Context, f *flow) (*Token, error)
}

// ownClient is implemented by grants that bring their own client, so
// that a token they obtained can be refreshed with it.
type ownClient interface {
	client() clientAuth
}

// flow is one authorization: what discovery found and the scopes to ask.
type flow struct {
	a      *Authorizer
	d      *discovery
	scopes []string
}

// token makes a token request to the authorization server of f, with
// the resource parameter (RFC 8707) and, for a DPoP-bound token, a proof.
func (f *flow) token(ctx context.Context, auth clientAuth, params url.Values) (*Token, error) {
	params.Set("resource", f.d.resource)
	hc, err := f.a.tokenClient(ctx, f.d.as)
	if err != nil {
		return nil, err
	}
	t, err := postToken(ctx, &tokenRequest{endpoint: f.d.as.TokenEndpoint, params: params, client: auth, hc: hc})
	if err != nil {
		return nil, err
	}
	tok := newToken(t, f.d.issuer, f.d.resource, f.scopes)
	tok.ClientID = auth.id
	return tok, nil
}

// ErrIssuerMismatch is the refusal of an authorization response that
// did not come from the authorization server the user was sent to (RFC
// 9207): a mix-up attack, or a misconfigured server.
var ErrIssuerMismatch = errors.New("auth: the authorization response comes from another authorization server (iss)")

// ErrStateMismatch is the refusal of an authorization response that
// does not answer the request this client made.
var ErrStateMismatch = errors.New("auth: the authorization response does not answer this client's request (state)")

// AuthorizationCode is the authorization code grant with PKCE (OAuth
// 2.1 §4.1): the user is sent to the authorization server, logs in and
// consents there, and is sent back to the redirect URI with a code,
// which the client exchanges for a token.
type AuthorizationCode struct {
	// RedirectURL is where the authorization server sends the user back.
	// Empty means a loopback URI, http://127.0.0.1:PORT/callback, on the
	// port of the client's earlier registration with that authorization
	// server or on a free port.
	RedirectURL string
	// Authorize sends the user to authURL and returns the query of the
	// request the authorization server redirected the user to, at
	// redirectURL (code, state, iss; or error). Loopback gives a function
	// that listens on the loopback redirect URI and opens a browser.
	Authorize func(ctx context.Context, authURL, redirectURL string) (url.Values, error)
}

func (g *AuthorizationCode) obtain(ctx context.Context, f *flow) (*Token, error) {
	if g.Authorize == nil {
		return nil, errors.New("auth: AuthorizationCode has no Authorize function")
	}
	as := f.d.as
	if !f.d.legacy && !contains(as.CodeChallengeMethodsSupported, "S256") {
		// "If code_challenge_methods_supported is absent, ... MCP
		// clients MUST refuse to proceed."
		return nil, fmt.Errorf("auth: the authorization server %s does not support PKCE with S256", f.d.issuer)
	}
	if as.AuthorizationEndpoint == "" {
		return nil, fmt.Errorf("auth: the authorization server %s has no authorization endpoint", f.d.issuer)
	}
	// The browser sends the request, but on the peer's word as much as
	// ferry's own requests: the same reach.
	if err := f.a.checkReachURL(ctx, as.AuthorizationEndpoint); err != nil {
		return nil, fmt.Errorf("auth: the authorization endpoint: %w", err)
	}
	id, err := f.a.register(ctx, f.d, g.RedirectURL, []string{metadata.GrantAuthorizationCode, metadata.GrantRefreshToken})
	if err != nil {
		return nil, err
	}
	state, verifier := randomString(24), oauth2.GenerateVerifier()
	cfg := oauth2.Config{
		ClientID:    id.auth.id,
		Endpoint:    oauth2.Endpoint{AuthURL: as.AuthorizationEndpoint},
		RedirectURL: id.redirectURI,
		Scopes:      f.scopes,
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", f.d.resource)}
	if contains(f.scopes, metadata.ScopeOfflineAccess) && contains(as.ScopesSupported, "openid") {
		// An OpenID provider grants offline_access only with a consent
		// prompt (OpenID Connect Core §11), so asking for a refresh token
		// there means asking for the consent screen.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "consent"))
	}
	authURL := cfg.AuthCodeURL(state, opts...)
	f.a.log().Info("auth: asking the user to authorize", "issuer", f.d.issuer, "client_id", id.auth.id, "scopes", f.scopes, "redirect_uri", id.redirectURI)
	q, err := g.Authorize(ctx, authURL, id.redirectURI)
	if err != nil {
		return nil, err
	}
	code, err := checkResponse(q, state, f.d)
	if err != nil {
		return nil, err
	}
	return f.token(ctx, id.auth, url.Values{
		"grant_type":    {metadata.GrantAuthorizationCode},
		"code":          {code},
		"redirect_uri":  {id.redirectURI},
		"code_verifier": {verifier},
	})
}

// checkResponse validates an authorization response before its code
// goes anywhere: it answers this request (state), and it comes from the
// authorization server the user was sent to, by the table of the MCP
// specification (RFC 9207 §2.4: iss compared as a string when present,
// required when the server says it always sends it). Only then are an
// error and its description believed.
func checkResponse(q url.Values, state string, d *discovery) (code string, err error) {
	if q.Get("state") != state {
		return "", ErrStateMismatch
	}
	iss, present := q.Get("iss"), q.Has("iss")
	switch {
	case present && iss != d.issuer:
		return "", fmt.Errorf("%w: %q instead of %q", ErrIssuerMismatch, iss, d.issuer)
	case !present && d.as.AuthorizationResponseIssParameterSupported:
		return "", fmt.Errorf("%w: the server says it sends iss, and this response has none", ErrIssuerMismatch)
	}
	if e := q.Get("error"); e != "" {
		return "", &TokenError{Endpoint: "authorization", Code: e, Description: q.Get("error_description")}
	}
	code = q.Get("code")
	if code == "" {
		return "", errors.New("auth: the authorization response has no code")
	}
	return code, nil
}
