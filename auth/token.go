package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// Token is an access token for one MCP server, with what came with it.
// Its String and LogValue methods do not show the secrets.
type Token struct {
	AccessToken string `json:"access_token"`
	// TokenType is "Bearer" or "DPoP" (then every request carries a
	// proof of the key the token is bound to).
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Issued is when the token was received: with Expiry, its lifetime,
	// which bounds how early it is refreshed.
	Issued time.Time `json:"issued,omitzero"`
	// Issuer is the authorization server that issued the token, and
	// Resource the resource it was asked for.
	Issuer   string `json:"issuer,omitempty"`
	Resource string `json:"resource,omitempty"`
	// ClientID is the client the token was issued to, which refreshes
	// it.
	ClientID string `json:"client_id,omitempty"`
	// Scopes were asked for; Granted are those the authorization server
	// says it granted (the asked ones when it does not say).
	Scopes  []string `json:"scopes,omitempty"`
	Granted []string `json:"granted,omitempty"`
}

// expiryLeeway is how long before its expiry a token is refreshed: a
// token that expires while its request travels is refused. A token that
// lives less than maxLeewayShare times the leeway is refreshed that
// share of its lifetime before it expires instead: with the whole
// leeway, a token living 30 s or less would be refreshed before every
// request, never used.
const (
	expiryLeeway   = 30 * time.Second
	maxLeewayShare = 4
)

// expired reports whether the token should be refreshed before use.
func (t *Token) expired(now time.Time) bool {
	return !t.Expiry.IsZero() && now.Add(t.leeway()).After(t.Expiry)
}

// leeway is expiryLeeway, or a quarter of the token's lifetime when that
// is shorter. A token of unknown lifetime (stored before Issued was)
// gets the whole leeway.
func (t *Token) leeway() time.Duration {
	if t.Issued.IsZero() || !t.Expiry.After(t.Issued) {
		return expiryLeeway
	}
	return min(expiryLeeway, t.Expiry.Sub(t.Issued)/maxLeewayShare)
}

func (t *Token) isDPoP() bool { return strings.EqualFold(t.TokenType, "DPoP") }

// scheme returns the Authorization scheme the token is sent with.
func (t *Token) scheme() string {
	if t.isDPoP() {
		return "DPoP"
	}
	return "Bearer"
}

// covers reports whether the token was granted every scope of want.
func (t *Token) covers(want []string) bool {
	for _, s := range want {
		if !contains(t.Granted, s) {
			return false
		}
	}
	return true
}

// String describes the token without its secrets.
func (t *Token) String() string {
	if t == nil {
		return "no token"
	}
	s := t.scheme() + " token"
	if t.Issuer != "" {
		s += " from " + t.Issuer
	}
	if len(t.Granted) > 0 {
		s += " for " + strings.Join(t.Granted, " ")
	}
	if !t.Expiry.IsZero() {
		s += ", expires " + t.Expiry.Format(time.RFC3339)
	}
	if t.RefreshToken != "" {
		s += ", refreshable"
	}
	return s
}

// GoString is String, so that %#v shows no secret either.
func (t *Token) GoString() string { return t.String() }

// LogValue is String, for log/slog.
func (t *Token) LogValue() slog.Value { return slog.StringValue(t.String()) }

// TokenError is an error answer of an authorization server's token
// endpoint (RFC 6749 §5.2), or of its authorization endpoint (§4.1.2.1)
// when Endpoint is "authorization".
type TokenError struct {
	Endpoint    string // "token", "authorization", "registration"
	Status      int    // the HTTP status, for the token endpoint
	Code        string // e.g. "invalid_grant", "access_denied"
	Description string
}

func (e *TokenError) Error() string {
	s := "auth: the authorization server refused the " + e.Endpoint + " request"
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += " (" + e.Description + ")"
	}
	return s
}

// tokenRequest is one request to a token endpoint.
type tokenRequest struct {
	endpoint string
	// params are the grant's parameters, grant_type included.
	params url.Values
	// client authenticates the request.
	client clientAuth
	// hc makes the request (with DPoP proofs when the grant asks).
	hc *http.Client
}

// clientAuth is how a client authenticates to a token endpoint.
type clientAuth struct {
	id     string
	secret string
	method string // a metadata.Auth* method
	// assertion returns a fresh client assertion for private_key_jwt.
	assertion func() (string, error)
}

// postToken makes a token request. Every grant goes through here, on
// golang.org/x/oauth2's token plumbing (form encoding, client
// authentication styles, response parsing): its client credentials flow
// lets a request name its own grant_type, which is what the refresh,
// JWT bearer and token exchange grants need, and unlike x/oauth2's
// refreshing TokenSource it sends every parameter given (resource among
// them) and runs on the caller's context.
func postToken(ctx context.Context, r *tokenRequest) (*oauth2.Token, error) {
	cfg := clientcredentials.Config{
		ClientID:       r.client.id,
		TokenURL:       r.endpoint,
		EndpointParams: r.params,
		AuthStyle:      oauth2.AuthStyleInParams,
	}
	switch r.client.method {
	case metadata.AuthClientSecretBasic:
		cfg.ClientSecret = r.client.secret
		cfg.AuthStyle = oauth2.AuthStyleInHeader
	case metadata.AuthClientSecretPost:
		cfg.ClientSecret = r.client.secret
	case metadata.AuthPrivateKeyJWT:
		if r.client.assertion == nil {
			return nil, errors.New("auth: private_key_jwt without a key to sign with")
		}
		a, err := r.client.assertion()
		if err != nil {
			return nil, err
		}
		params := cloneValues(r.params)
		params.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		params.Set("client_assertion", a)
		cfg.EndpointParams = params
	}
	tok, err := cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, r.hc))
	if err != nil {
		return nil, tokenErr(err)
	}
	return tok, nil
}

// tokenErr turns an error of x/oauth2 into one that shows the
// authorization server's error code and description, never the body of
// its answer (which a misbehaving server could fill with anything).
func tokenErr(err error) error {
	err = bare(err)
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return fmt.Errorf("auth: token request: %w", err)
	}
	e := &TokenError{Endpoint: "token", Code: re.ErrorCode, Description: re.ErrorDescription}
	if re.Response != nil {
		e.Status = re.Response.StatusCode
	}
	if e.Code == "" && e.Status != 0 {
		e.Code = http.StatusText(e.Status)
	}
	return e
}

// newToken makes a Token of a token endpoint's answer to a request for
// scopes of resource at issuer.
func newToken(t *oauth2.Token, issuer, resource string, scopes []string) *Token {
	tok := &Token{
		AccessToken:  t.AccessToken,
		TokenType:    t.TokenType,
		RefreshToken: t.RefreshToken,
		Expiry:       t.Expiry,
		Issued:       time.Now(),
		Issuer:       issuer,
		Resource:     resource,
		Scopes:       scopes,
		Granted:      scopes,
	}
	if tok.TokenType == "" {
		tok.TokenType = "Bearer"
	}
	if s, ok := t.Extra("scope").(string); ok && s != "" {
		tok.Granted = strings.Fields(s)
	}
	return tok
}

func cloneValues(v url.Values) url.Values {
	c := make(url.Values, len(v)+2)
	for k, vs := range v {
		c[k] = append([]string(nil), vs...)
	}
	return c
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// union returns a followed by the members of b not in a.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
