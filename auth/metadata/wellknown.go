package metadata

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Well-known URI suffixes.
const (
	ProtectedResourceSuffix   = "/.well-known/oauth-protected-resource"
	AuthorizationServerSuffix = "/.well-known/oauth-authorization-server"
	OpenIDConfigurationSuffix = "/.well-known/openid-configuration"
)

// split returns the origin ("https://host:port") and the path of an
// absolute http(s) URL, the path without its terminating slash (RFC 8414
// §3.1: "any terminating '/' ... MUST be removed"), so "" for a root.
func split(raw string) (origin, path string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return "", "", fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Fragment != "" {
		return "", "", fmt.Errorf("%q has a fragment", raw)
	}
	return u.Scheme + "://" + u.Host, strings.TrimSuffix(u.EscapedPath(), "/"), nil
}

// ProtectedResourceURLs returns the addresses of the metadata of the MCP
// server at server, in the order a client tries them when no challenge
// names one: the path-inserted well-known URI, then the one at the root
// (only the root for a server at the root).
func ProtectedResourceURLs(server string) ([]string, error) {
	origin, path, err := split(server)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return []string{origin + ProtectedResourceSuffix}, nil
	}
	return []string{origin + ProtectedResourceSuffix + path, origin + ProtectedResourceSuffix}, nil
}

// ProtectedResourcePath returns the path at which the metadata of the
// resource identified by resource is served (RFC 9728 §3.1): the
// well-known suffix followed by the resource's path.
func ProtectedResourcePath(resource string) (string, error) {
	_, path, err := split(resource)
	if err != nil {
		return "", err
	}
	return ProtectedResourceSuffix + path, nil
}

// ProtectedResourceURL returns the absolute address of the metadata of
// the resource identified by resource.
func ProtectedResourceURL(resource string) (string, error) {
	origin, path, err := split(resource)
	if err != nil {
		return "", err
	}
	return origin + ProtectedResourceSuffix + path, nil
}

// AuthorizationServerURLs returns the addresses of the metadata of the
// authorization server identified by issuer, in the order of the MCP
// specification: for an issuer with a path, RFC 8414 and OpenID Connect
// Discovery with the path inserted, then OpenID Connect with the path
// appended; for one without, RFC 8414 then OpenID Connect.
func AuthorizationServerURLs(issuer string) ([]string, error) {
	origin, path, err := split(issuer)
	if err != nil {
		return nil, err
	}
	if path == "" {
		return []string{origin + AuthorizationServerSuffix, origin + OpenIDConfigurationSuffix}, nil
	}
	return []string{
		origin + AuthorizationServerSuffix + path,
		origin + OpenIDConfigurationSuffix + path,
		origin + path + OpenIDConfigurationSuffix,
	}, nil
}

// ErrResourceMismatch is returned by CheckResource for a resource that
// does not identify the server.
var ErrResourceMismatch = errors.New("the protected resource metadata names another resource")

// CheckResource reports whether resource, as published in a server's
// Protected Resource Metadata, may identify the MCP server at server: it
// has the server's scheme and host (compared without case, which RFC
// 3986 makes insensitive there) and its path is the server's path or a
// leading part of it, segment by segment. A resource for another origin
// or path would make a client ask for tokens it must not send to this
// server (RFC 9728 §3.3, §7.3).
func CheckResource(resource, server string) error {
	ro, rp, err := split(resource)
	if err != nil {
		return fmt.Errorf("resource: %w", err)
	}
	so, sp, err := split(server)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	if !strings.EqualFold(ro, so) || !(rp == sp || strings.HasPrefix(sp, rp+"/")) {
		return fmt.Errorf("%w: %q is not the server %q", ErrResourceMismatch, resource, server)
	}
	return nil
}
