package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/auth"
)

// cimdURL is the client ID metadata document the suite expects
// (auth/basic-cimd): the suite never fetches it.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// redirectURL is never listened on: the suite's authorization server
// redirects at once, and authorizeHeadless reads its Location.
const redirectURL = "http://localhost:3000/callback"

// authContext is the scenario data of auth/* scenarios.
type authContext struct {
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
	ValidJWT         string `json:"valid_jwt"`
}

// authorizer returns the Authorizer of an auth/* scenario: the grant the
// scenario tests, with the credentials of its context.
func (r *run) authorizer(scenario string) (*auth.Authorizer, error) {
	var sc authContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sc); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	a := &auth.Authorizer{
		Server:            r.url,
		ClientMetadataURL: cimdURL,
		ClientName:        "ferry-conformance-client",
		DPoP:              true,
		Logger:            r.log,
	}
	switch scenario {
	case "auth/client-credentials-jwt":
		key, err := auth.ParsePrivateKey([]byte(sc.PrivateKeyPEM))
		if err != nil {
			return nil, err
		}
		a.Grant = &auth.ClientCredentials{ClientID: sc.ClientID, PrivateKey: key, SigningAlgorithm: sc.SigningAlgorithm}
	case "auth/client-credentials-basic":
		a.Grant = &auth.ClientCredentials{ClientID: sc.ClientID, ClientSecret: sc.ClientSecret}
	case "auth/enterprise-managed-authorization", "auth/cross-app-access-complete-flow":
		a.Grant = &auth.EnterpriseManaged{
			IDToken:          func(context.Context) (string, error) { return sc.IDPIDToken, nil },
			IDPTokenEndpoint: sc.IDPTokenEndpoint,
			IDPClientID:      sc.IDPClientID,
			ClientID:         sc.ClientID,
			ClientSecret:     sc.ClientSecret,
		}
	case "auth/wif-jwt-bearer":
		a.Grant = &auth.JWTBearer{ClientID: sc.ClientID, Assertion: func(context.Context) (string, error) { return sc.ValidJWT, nil }}
	default:
		a.Grant = &auth.AuthorizationCode{RedirectURL: redirectURL, Authorize: authorizeHeadless}
		if sc.ClientID != "" {
			a.Clients = []auth.RegisteredClient{{ID: sc.ClientID, Secret: sc.ClientSecret, Issuer: sc.Issuer}}
		}
	}
	return a, nil
}

// authorizeHeadless plays the user's browser: the suite's authorization
// server approves at once and redirects, so the authorization response
// is the query of its Location.
func authorizeHeadless(ctx context.Context, authURL, _ string) (url.Values, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
		return nil, fmt.Errorf("the authorization endpoint answered %s without a redirect", resp.Status)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	return u.Query(), nil
}

// authScenario connects through an Authorizer and uses the server's
// tools.
func (r *run) authScenario(ctx context.Context, scenario string) error {
	a, err := r.authorizer(scenario)
	if err != nil {
		return err
	}
	r.hc = &http.Client{Transport: a.RoundTripper(nil)}
	err = r.callTools(ctx, scenario)
	var te *auth.TokenError
	if errors.As(err, &te) {
		return fmt.Errorf("authorization refused: %w", te)
	}
	return err
}
