package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// RegisteredClient is a client registered with an authorization server
// beforehand (pre-registration): the client ID and secret an operator
// created, or a host's configuration names.
type RegisteredClient struct {
	ID     string
	Secret string
	// Issuer binds the client to the authorization server that issued
	// it: a client ID is valid only there. Empty means the authorization
	// server the MCP server names, whichever it is.
	Issuer string
	// AuthMethod is how the client authenticates to the token endpoint;
	// empty means chosen among those the authorization server supports.
	AuthMethod string
	// RedirectURL is the redirect URI registered for the client, when
	// the authorization code grant is to use that one.
	RedirectURL string
}

// String describes the client without its secret.
func (c RegisteredClient) String() string {
	return (&Registration{ClientID: c.ID, ClientSecret: c.Secret}).String()
}

// GoString is String, so that %#v shows no secret either.
func (c RegisteredClient) GoString() string { return c.String() }

// ErrNoRegistration is returned when the client has no way to identify
// itself to an authorization server: no pre-registered client for it,
// and it supports neither client ID metadata documents nor dynamic
// registration.
var ErrNoRegistration = errors.New("auth: no client is registered with the authorization server, and it offers no registration")

// identity is the client as one authorization server knows it.
type identity struct {
	auth        clientAuth
	redirectURI string
}

// register finds how the client identifies itself to the authorization
// server of d, in the specification's order: a pre-registered client,
// a client ID metadata document, a client registered dynamically before
// (whose redirect URI, and so its loopback port, is kept), a new dynamic
// registration. redirect is the redirect URI wanted, "" for any
// loopback one.
func (a *Authorizer) register(ctx context.Context, d *discovery, redirect string, grantTypes []string) (*identity, error) {
	if c, ok, err := a.preRegistered(d.issuer); err != nil || ok {
		if err != nil {
			return nil, err
		}
		id := &identity{auth: clientAuth{id: c.ID, secret: c.Secret, method: c.AuthMethod}, redirectURI: firstOf(c.RedirectURL, redirect)}
		if id.auth.method == "" {
			id.auth.method = chooseAuthMethod(d.as.TokenEndpointAuthMethodsSupported, c.Secret != "")
		}
		return id.withRedirect()
	}
	if a.ClientMetadataURL != "" && d.as.ClientIDMetadataDocumentSupported {
		return (&identity{auth: clientAuth{id: a.ClientMetadataURL, method: metadata.AuthNone}, redirectURI: redirect}).withRedirect()
	}
	if reg := a.storedRegistration(ctx, d.issuer, redirect); reg != nil {
		return &identity{auth: clientAuth{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, redirectURI: reg.RedirectURI}, nil
	}
	if d.as.RegistrationEndpoint == "" {
		return nil, fmt.Errorf("%w (%s)", ErrNoRegistration, d.issuer)
	}
	if redirect == "" {
		var err error
		if redirect, err = freeLoopbackURL(); err != nil {
			return nil, err
		}
	}
	reg, err := a.registerDynamically(ctx, d, redirect, grantTypes)
	if err != nil {
		return nil, err
	}
	return &identity{auth: clientAuth{id: reg.ClientID, secret: reg.ClientSecret, method: reg.AuthMethod}, redirectURI: reg.RedirectURI}, nil
}

// withRedirect gives the identity a loopback redirect URI on a free
// port when it has none.
func (id *identity) withRedirect() (*identity, error) {
	if id.redirectURI != "" {
		return id, nil
	}
	u, err := freeLoopbackURL()
	id.redirectURI = u
	return id, err
}

// preRegistered returns the pre-registered client for issuer. When
// clients are configured but none may be used there, the authorization
// server is not the one they were registered with: that is an error to
// show, not a reason to register another client silently.
func (a *Authorizer) preRegistered(issuer string) (RegisteredClient, bool, error) {
	var unbound *RegisteredClient
	for i, c := range a.Clients {
		switch c.Issuer {
		case issuer:
			return c, true, nil
		case "":
			if unbound == nil {
				unbound = &a.Clients[i]
			}
		}
	}
	if unbound != nil {
		return *unbound, true, nil
	}
	if len(a.Clients) > 0 {
		return RegisteredClient{}, false, fmt.Errorf("auth: the configured clients are registered with %s, but the server now names the authorization server %s", a.Clients[0].Issuer, issuer)
	}
	return RegisteredClient{}, false, nil
}

// storedRegistration returns the client registered dynamically with
// issuer before, unless it was registered for another redirect URI than
// the one wanted or its secret expired.
func (a *Authorizer) storedRegistration(ctx context.Context, issuer, redirect string) *Registration {
	rec, err := a.store().Load(ctx, a.server())
	if err != nil || rec == nil {
		return nil
	}
	reg := rec.Clients[issuer]
	switch {
	case reg == nil:
		return nil
	case redirect != "" && reg.RedirectURI != redirect:
		return nil
	case reg.ExpiresAt != 0 && time.Now().Unix() >= reg.ExpiresAt:
		return nil
	}
	return reg
}

// registerDynamically registers a client (RFC 7591) and stores it.
func (a *Authorizer) registerDynamically(ctx context.Context, d *discovery, redirect string, grantTypes []string) (*Registration, error) {
	method := chooseAuthMethod(d.as.TokenEndpointAuthMethodsSupported, false)
	req := &metadata.OAuthClient{
		ClientName:              a.clientName(),
		RedirectURIs:            []string{redirect},
		GrantTypes:              grantTypes,
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         applicationType(redirect),
	}
	var resp metadata.OAuthClient
	if err := postJSON(ctx, a.postClient("registration", true), "registration", d.as.RegistrationEndpoint, req, &resp); err != nil {
		return nil, fmt.Errorf("auth: registering with %s: %w", d.issuer, err)
	}
	if resp.ClientID == "" {
		return nil, fmt.Errorf("auth: registering with %s: the answer has no client_id", d.issuer)
	}
	reg := &Registration{
		ClientID:     resp.ClientID,
		ClientSecret: resp.ClientSecret,
		AuthMethod:   firstOf(resp.TokenEndpointAuthMethod, method),
		RedirectURI:  redirect,
		ExpiresAt:    resp.ClientSecretExpiresAt,
	}
	a.log().Info("auth: registered a client", "issuer", d.issuer, "client_id", reg.ClientID, "redirect_uri", redirect)
	err := a.store().Update(ctx, a.server(), func(r *Record) (*Record, error) {
		if r == nil {
			r = &Record{}
		}
		if r.Clients == nil {
			r.Clients = map[string]*Registration{}
		}
		r.Clients[d.issuer] = reg
		return r, nil
	})
	return reg, err
}

// chooseAuthMethod picks a token endpoint authentication method among
// those an authorization server supports (RFC 8414: client_secret_basic
// when it says nothing): for a client with a secret, Basic, then the
// body; for one without, none.
func chooseAuthMethod(supported []string, secret bool) string {
	if !secret {
		if len(supported) == 0 || contains(supported, metadata.AuthNone) {
			return metadata.AuthNone
		}
		for _, m := range []string{metadata.AuthClientSecretBasic, metadata.AuthClientSecretPost} {
			if contains(supported, m) {
				return m
			}
		}
		return metadata.AuthNone
	}
	if len(supported) == 0 {
		return metadata.AuthClientSecretBasic
	}
	for _, m := range []string{metadata.AuthClientSecretBasic, metadata.AuthClientSecretPost, metadata.AuthNone} {
		if contains(supported, m) {
			return m
		}
	}
	return metadata.AuthClientSecretBasic
}

// applicationType is "native" for a redirect to this machine or to a
// custom scheme, "web" otherwise (OpenID Connect Registration §2).
func applicationType(redirect string) string {
	u, err := url.Parse(redirect)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || isLoopback(u.Hostname()) {
		return "native"
	}
	return "web"
}

// freeLoopbackURL returns a loopback redirect URI on a port free now.
func freeLoopbackURL() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("auth: finding a free port for the redirect: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback", nil
}

func firstOf(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
