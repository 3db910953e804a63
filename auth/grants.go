package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// ClientCredentials is the client credentials grant (RFC 6749 §4.4) of
// the OAuth Client Credentials extension: the client acts on its own
// behalf, with no user, authenticated by a secret (client_secret_basic
// or client_secret_post) or by a JWT signed with its private key
// (private_key_jwt, RFC 7523).
type ClientCredentials struct {
	ClientID     string
	ClientSecret string
	// PrivateKey signs client assertions instead of a secret. Its
	// algorithm is SigningAlgorithm, or for an empty one ES256, ES384 or
	// ES512 for EC keys by curve, RS256 for RSA keys and EdDSA for
	// Ed25519 keys.
	PrivateKey       crypto.Signer
	SigningAlgorithm string
	// AuthMethod forces a token endpoint authentication method; empty
	// means private_key_jwt with a key, else chosen among the methods
	// the authorization server supports.
	AuthMethod string
}

func (g *ClientCredentials) client() clientAuth {
	c := clientAuth{id: g.ClientID, secret: g.ClientSecret, method: g.AuthMethod}
	if g.PrivateKey != nil && c.method == "" {
		c.method = metadata.AuthPrivateKeyJWT
	}
	return c
}

func (g *ClientCredentials) obtain(ctx context.Context, f *flow) (*Token, error) {
	auth := g.client()
	if auth.method == "" {
		auth.method = chooseAuthMethod(f.d.as.TokenEndpointAuthMethodsSupported, g.ClientSecret != "")
	}
	if auth.method == metadata.AuthPrivateKeyJWT {
		if g.PrivateKey == nil {
			return nil, errors.New("auth: private_key_jwt needs a PrivateKey")
		}
		issuer := f.d.issuer
		auth.assertion = func() (string, error) {
			return clientAssertion(g.PrivateKey, g.SigningAlgorithm, g.ClientID, issuer)
		}
	}
	params := url.Values{"grant_type": {metadata.GrantClientCredentials}}
	setScope(params, f.scopes)
	return f.token(ctx, auth, params)
}

// clientAssertion signs the JWT a client authenticates with (RFC 7523
// §3): issued by the client about itself, for the authorization server
// (its issuer identifier, as RFC 7523bis prefers to the token
// endpoint), valid for five minutes, never to be used twice (jti).
func clientAssertion(key crypto.Signer, alg, clientID, audience string) (string, error) {
	if alg == "" {
		var err error
		if alg, err = keyAlgorithm(key); err != nil {
			return "", err
		}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg), Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("auth: client assertion: %w", err)
	}
	now := time.Now()
	return jwt.Signed(signer).Claims(jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
		ID:       randomString(16),
	}).Serialize()
}

// keyAlgorithm is the usual signing algorithm of a key.
func keyAlgorithm(key crypto.Signer) (string, error) {
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return "ES256", nil
		case elliptic.P384():
			return "ES384", nil
		case elliptic.P521():
			return "ES512", nil
		}
	case *rsa.PublicKey:
		return "RS256", nil
	case ed25519.PublicKey:
		return "EdDSA", nil
	}
	return "", fmt.Errorf("auth: no signing algorithm for a %T key", key.Public())
}

// ParsePrivateKey reads a PEM private key (PKCS #8, or the older PKCS #1
// and SEC 1 forms) for ClientCredentials.
func ParsePrivateKey(pemData []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return nil, errors.New("auth: no PEM block in the private key")
	}
	var k any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("auth: the private key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("auth: a %T cannot sign", k)
	}
	return s, nil
}

// JWTBearer is the JWT bearer grant (RFC 7523 §2.1) of workload identity
// federation: a workload presents a JWT its platform issued to it (a
// Kubernetes service account token, a cloud identity token), which the
// authorization server trusts, and gets a token without a secret. An
// error of the authorization server is returned as it is: the grant is
// neither repeated nor replaced by another.
type JWTBearer struct {
	// ClientID, when the authorization server wants one.
	ClientID string
	// Assertion returns the workload's JWT, read anew for each token
	// request (platforms rotate them).
	Assertion func(ctx context.Context) (string, error)
}

func (g *JWTBearer) client() clientAuth {
	return clientAuth{id: g.ClientID, method: metadata.AuthNone}
}

func (g *JWTBearer) obtain(ctx context.Context, f *flow) (*Token, error) {
	if g.Assertion == nil {
		return nil, errors.New("auth: JWTBearer has no Assertion function")
	}
	assertion, err := g.Assertion(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: the workload's JWT: %w", err)
	}
	params := url.Values{"grant_type": {metadata.GrantJWTBearer}, "assertion": {assertion}}
	setScope(params, f.scopes)
	return f.token(ctx, g.client(), params)
}

// EnterpriseManaged is enterprise-managed authorization (the
// Enterprise-Managed Authorization extension, SEP-990): the user's
// identity assertion from the enterprise's identity provider (an OpenID
// Connect ID token from their single sign-on) is exchanged there for an
// identity assertion authorization grant (ID-JAG, by RFC 8693 token
// exchange) naming the MCP server's authorization server, which the
// client then presents to that server (RFC 7523 JWT bearer grant). No
// browser is involved: the enterprise's policy decides.
type EnterpriseManaged struct {
	// IDToken returns the user's ID token from the identity provider.
	IDToken func(ctx context.Context) (string, error)
	// IDPTokenEndpoint is the identity provider's token endpoint, and
	// IDPClientID and IDPClientSecret the client there.
	IDPTokenEndpoint string
	IDPClientID      string
	IDPClientSecret  string
	// ClientID and ClientSecret are the client at the MCP server's
	// authorization server.
	ClientID     string
	ClientSecret string
}

// Token types of the exchange.
const (
	tokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG   = "urn:ietf:params:oauth:token-type:id-jag"
)

func (g *EnterpriseManaged) client() clientAuth {
	c := clientAuth{id: g.ClientID, secret: g.ClientSecret, method: metadata.AuthNone}
	if g.ClientSecret != "" {
		c.method = metadata.AuthClientSecretBasic
	}
	return c
}

func (g *EnterpriseManaged) obtain(ctx context.Context, f *flow) (*Token, error) {
	if g.IDToken == nil || g.IDPTokenEndpoint == "" {
		return nil, errors.New("auth: EnterpriseManaged needs IDToken and IDPTokenEndpoint")
	}
	if err := checkURL("identity provider's token endpoint", g.IDPTokenEndpoint, f.a.InsecureHTTP); err != nil {
		return nil, err
	}
	idToken, err := g.IDToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: the ID token: %w", err)
	}
	exchange := url.Values{
		"grant_type":           {metadata.GrantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {f.d.issuer},
		"resource":             {f.d.resource},
		"subject_token":        {idToken},
		"subject_token_type":   {tokenTypeIDToken},
	}
	setScope(exchange, f.scopes)
	idp := clientAuth{id: g.IDPClientID, secret: g.IDPClientSecret, method: metadata.AuthNone}
	if g.IDPClientSecret != "" {
		idp.method = metadata.AuthClientSecretBasic
	}
	jag, err := postToken(ctx, &tokenRequest{endpoint: g.IDPTokenEndpoint, params: exchange, client: idp, hc: f.a.postClient("identity provider's token", false)})
	if err != nil {
		var te *TokenError
		if errors.As(err, &te) {
			te.Endpoint = "identity provider's token"
		}
		return nil, err
	}
	if t, _ := jag.Extra("issued_token_type").(string); t != "" && t != tokenTypeIDJAG {
		return nil, fmt.Errorf("auth: the identity provider issued a %q, not an ID-JAG", t)
	}
	params := url.Values{"grant_type": {metadata.GrantJWTBearer}, "assertion": {jag.AccessToken}}
	setScope(params, f.scopes)
	return f.token(ctx, g.client(), params)
}

func setScope(params url.Values, scopes []string) {
	if len(scopes) > 0 {
		params.Set("scope", strings.Join(scopes, " "))
	}
}
