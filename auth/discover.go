package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// discovery is what a client learns about a server's authorization
// before asking for a token.
type discovery struct {
	// prm is the server's Protected Resource Metadata; nil for a server
	// of the 2025-03-26 revision, which had none.
	prm *metadata.ProtectedResource
	// resource is sent as the resource parameter: the PRM's resource
	// exactly as published, or the server's URL without PRM.
	resource string
	// issuer identifies the authorization server chosen, as given.
	issuer string
	as     *metadata.AuthorizationServer
	// legacy says that the authorization server had no metadata and its
	// endpoints are those of the 2025-03-26 revision's fallback.
	legacy bool
}

// ErrResourceMismatch is the refusal of a server whose Protected
// Resource Metadata names another resource: a token asked for that
// resource must not be sent to this server.
var ErrResourceMismatch = metadata.ErrResourceMismatch

// discover finds the server's Protected Resource Metadata (from the
// challenges of its refusal, else at the well-known addresses), chooses
// an authorization server and fetches its metadata.
func (a *Authorizer) discover(ctx context.Context, cs []metadata.Challenge) (*discovery, error) {
	prm, err := a.protectedResource(ctx, cs)
	if err != nil {
		return nil, err
	}
	d := &discovery{prm: prm}
	if prm == nil {
		// The 2025-03-26 revision: the authorization server is at the
		// MCP server's origin.
		u, _ := url.Parse(a.server())
		d.resource = a.server()
		d.issuer = u.Scheme + "://" + u.Host
	} else {
		d.resource = prm.Resource
		d.issuer = a.chooseIssuer(prm.AuthorizationServers)
	}
	d.as, d.legacy, err = a.authorizationServer(ctx, d.issuer, prm == nil)
	if err != nil {
		return nil, err
	}
	if prm == nil {
		d.issuer = d.as.Issuer
	}
	return d, nil
}

// protectedResource fetches the server's metadata from the address its
// challenge gives, else from the well-known addresses in order. It
// returns nil, nil when the server publishes none at the well-known
// addresses and named none.
func (a *Authorizer) protectedResource(ctx context.Context, cs []metadata.Challenge) (*metadata.ProtectedResource, error) {
	var urls []string
	named := false
	if c, ok := metadata.FindChallenge(cs, "Bearer", "DPoP"); ok {
		if u := c.Param(metadata.ParamResourceMetadata); u != "" {
			urls, named = []string{u}, true
		}
	}
	if !named {
		var err error
		if urls, err = metadata.ProtectedResourceURLs(a.server()); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
	}
	var last error
	for _, u := range urls {
		if err := checkMetadataURL("protected resource metadata address", u, a.InsecureHTTP); err != nil {
			return nil, err
		}
		var prm metadata.ProtectedResource
		err := getJSON(ctx, a.fetchClient(), u, &prm)
		var se *statusError
		if errors.As(err, &se) && se.status >= 400 && se.status < 500 && !named {
			last = err
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("auth: protected resource metadata: %w", err)
		}
		if err := metadata.CheckResource(prm.Resource, a.server()); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, fmt.Errorf("auth: the protected resource metadata at %s names no authorization server", u)
		}
		a.log().Debug("auth: protected resource metadata", "url", u, "resource", prm.Resource, "authorization_servers", prm.AuthorizationServers)
		return &prm, nil
	}
	a.log().Debug("auth: no protected resource metadata; assuming the 2025-03-26 revision", "last", last)
	return nil, nil
}

// chooseIssuer picks one of the authorization servers of a resource:
// the first that a pre-registered client is bound to, else the first.
func (a *Authorizer) chooseIssuer(issuers []string) string {
	for _, c := range a.Clients {
		if c.Issuer != "" && slices.Contains(issuers, c.Issuer) {
			return c.Issuer
		}
	}
	return issuers[0]
}

// authorizationServer fetches the metadata of the authorization server
// identified by issuer, trying the well-known addresses in the
// specification's order, and checks it. A document whose issuer differs
// from issuer is not used (RFC 8414 §3.3). When no address has a
// document and fallback allows (a server of the 2025-03-26 revision), it
// returns the default endpoints of that revision.
func (a *Authorizer) authorizationServer(ctx context.Context, issuer string, fallback bool) (*metadata.AuthorizationServer, bool, error) {
	a.mu.Lock()
	if as, ok := a.asCache[issuer]; ok {
		a.mu.Unlock()
		return as.meta, as.legacy, nil
	}
	a.mu.Unlock()
	urls, err := metadata.AuthorizationServerURLs(issuer)
	if err != nil {
		return nil, false, fmt.Errorf("auth: authorization server: %w", err)
	}
	if err := checkMetadataURL("authorization server", issuer, a.InsecureHTTP); err != nil {
		return nil, false, err
	}
	var rejected error
	for _, u := range urls {
		var as metadata.AuthorizationServer
		err := getJSON(ctx, a.fetchClient(), u, &as)
		var se *statusError
		if errors.As(err, &se) && se.status >= 400 && se.status < 500 {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("auth: authorization server metadata: %w", err)
		}
		if as.Issuer != issuer && fallback && as.Issuer != "" {
			// The 2025-03-26 revision knew no issuer to compare with:
			// its client took the metadata at the MCP server's origin
			// for what it says, and so does this one, for such a server
			// only (one without Protected Resource Metadata).
			a.log().Debug("auth: a 2025-03-26 server's authorization server names itself", "issuer", as.Issuer, "origin", issuer)
		} else if as.Issuer != issuer {
			// "If they differ, the client MUST NOT use the metadata."
			rejected = fmt.Errorf("auth: the authorization server metadata at %s is for the issuer %q, not %q", u, as.Issuer, issuer)
			a.log().Warn("auth: refused authorization server metadata", "url", u, "issuer", as.Issuer, "expected", issuer)
			continue
		}
		if err := a.checkEndpoints(&as); err != nil {
			return nil, false, err
		}
		a.cacheAS(issuer, &as, false)
		if as.Issuer != issuer {
			a.cacheAS(as.Issuer, &as, false) // for refreshes, by the token's issuer
		}
		return &as, false, nil
	}
	if rejected != nil {
		return nil, false, rejected
	}
	if !fallback {
		return nil, false, fmt.Errorf("auth: the authorization server %s publishes no metadata (tried %v)", issuer, urls)
	}
	// "Clients MUST use the default endpoint paths ... /authorize,
	// /token, /register" (2025-03-26).
	as := &metadata.AuthorizationServer{
		Issuer:                issuer,
		AuthorizationEndpoint: issuer + "/authorize",
		TokenEndpoint:         issuer + "/token",
		RegistrationEndpoint:  issuer + "/register",
	}
	a.cacheAS(issuer, as, true)
	return as, true, nil
}

func (a *Authorizer) cacheAS(issuer string, as *metadata.AuthorizationServer, legacy bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.asCache == nil {
		a.asCache = map[string]cachedAS{}
	}
	a.asCache[issuer] = cachedAS{as, legacy}
}

type cachedAS struct {
	meta   *metadata.AuthorizationServer
	legacy bool
}

// checkEndpoints refuses metadata whose endpoints the client must not
// use (a javascript: URL, http to another machine).
func (a *Authorizer) checkEndpoints(as *metadata.AuthorizationServer) error {
	for what, u := range map[string]string{
		"authorization endpoint": as.AuthorizationEndpoint,
		"token endpoint":         as.TokenEndpoint,
		"registration endpoint":  as.RegistrationEndpoint,
	} {
		if u == "" {
			continue
		}
		if err := checkURL(what, u, a.InsecureHTTP); err != nil {
			return err
		}
	}
	if as.TokenEndpoint == "" {
		return fmt.Errorf("auth: the authorization server %s has no token endpoint", as.Issuer)
	}
	return nil
}
