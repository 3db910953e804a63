package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// The addresses of metadata documents, authorization servers and their
// endpoints are chosen by the MCP server, or by the authorization server
// it names: a peer. Fetching them where they point lets that peer send
// requests from the user's machine to services only the user reaches
// (SSRF): an admin page on a loopback port, a router on the LAN. Neither
// the MCP specification nor RFC 9728 confines resource_metadata or an
// issuer to the MCP server's origin (authorization servers are usually
// elsewhere), so what is refused is network reach: a request for a
// server goes to no network more internal than the server's own. A
// loopback MCP server may name loopback, private and public addresses; a
// server on a private network, private and public ones; a public server,
// public ones only. Every request is checked, each hop of a redirect
// included; the MCP server's own host is always allowed.

// netClass ranks networks from the most internal to the most public.
type netClass int

const (
	netLoopback netClass = iota
	netPrivate
	netPublic
)

func (c netClass) String() string {
	switch c {
	case netLoopback:
		return "this machine (loopback)"
	case netPrivate:
		return "a private network"
	}
	return "the public internet"
}

// sharedAddressSpace is the carrier-grade NAT range (RFC 6598), private
// in all but name.
var sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10")

// addrClass is the network of an IP address. The unspecified address and
// 0.0.0.0/8 reach this machine on most systems.
func addrClass(ip netip.Addr) netClass {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback(), ip.IsUnspecified(), ip.Is4() && ip.As4()[0] == 0:
		return netLoopback
	case ip.IsPrivate(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(),
		ip.IsInterfaceLocalMulticast(), sharedAddressSpace.Contains(ip):
		return netPrivate
	}
	return netPublic
}

// hostClass is the network of a URL's host: the most internal of the
// addresses a name resolves to. A name that does not resolve here (one a
// proxy resolves) counts as public: the request goes nowhere on this
// machine's networks.
func hostClass(ctx context.Context, host string) netClass {
	if isLoopback(host) {
		return netLoopback
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return addrClass(ip)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netPublic
	}
	c := netPublic
	for _, ip := range ips {
		c = min(c, addrClass(ip))
	}
	return c
}

// UnreachableError is the refusal of an address on a network more
// internal than the MCP server's.
type UnreachableError struct {
	URL     string // as shown: without a password, bounded
	Network string // where URL is
	Server  string // the MCP server's host
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%s is on %s, where the MCP server %s is not: nothing is sent there on its word", e.URL, e.Network, e.Server)
}

// checkReach refuses u when it is on a network more internal than the
// MCP server's.
func (a *Authorizer) checkReach(ctx context.Context, u *url.URL) error {
	server, err := url.Parse(a.server())
	if err != nil {
		return fmt.Errorf("auth: the server %q: %w", a.server(), err)
	}
	if strings.EqualFold(u.Hostname(), server.Hostname()) {
		return nil
	}
	got := hostClass(ctx, u.Hostname())
	allowed := hostClass(ctx, server.Hostname())
	if got >= allowed {
		return nil
	}
	return &UnreachableError{URL: shownURL(u), Network: got.String(), Server: server.Host}
}

// checkReachURL is checkReach of an address not yet parsed.
func (a *Authorizer) checkReachURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return a.checkReach(ctx, u)
}

// shownURL is u for an error message: without a password, bounded (the
// peer chose it).
func shownURL(u *url.URL) string {
	s := u.Redacted()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// reachGuard checks every request it sends, each hop of a redirect
// included (http.Client calls its Transport once a hop).
type reachGuard struct {
	a    *Authorizer
	base http.RoundTripper
}

func (g reachGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := g.a.checkReach(r.Context(), r.URL); err != nil {
		if r.Body != nil {
			r.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	return g.base.RoundTrip(r)
}

// maxMetadataRedirects bounds the redirects of a metadata request.
const maxMetadataRedirects = 5

// fetchClient returns the client of GET requests to addresses a peer
// chose (metadata documents, the probe of the server): every hop is
// checked for its network and its scheme, and there are few hops.
func (a *Authorizer) fetchClient() *http.Client {
	c := a.guarded(true)
	then := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > maxMetadataRedirects {
			return fmt.Errorf("auth: %s: more than %d redirects", shownURL(via[0].URL), maxMetadataRedirects)
		}
		if err := checkURL("redirect of "+shownURL(via[0].URL), req.URL.String(), a.InsecureHTTP); err != nil {
			return err
		}
		if then != nil {
			return then(req, via)
		}
		return nil
	}
	return c
}

// postClient returns the client of the POST requests of a token or a
// registration, which carry a code, a verifier, a secret or an
// assertion: a redirect is not followed (net/http would send a 307's
// body again, to wherever it points), and peer chooses whether the
// endpoint, a peer's choice, is checked for its network.
func (a *Authorizer) postClient(endpoint string, peer bool) *http.Client {
	c := a.guarded(peer)
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		e := &EndpointRedirectError{Endpoint: endpoint, Location: shownURL(req.URL)}
		if req.Response != nil {
			e.Status = req.Response.StatusCode
		}
		return e
	}
	return c
}

// guarded returns a copy of the HTTP client, with the reach guard when
// peer says that the addresses are a peer's choice.
func (a *Authorizer) guarded(peer bool) *http.Client {
	c := *a.httpClient()
	if peer {
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = reachGuard{a: a, base: base}
	}
	return &c
}

// EndpointRedirectError is a token or registration endpoint's redirect,
// which the client does not follow.
type EndpointRedirectError struct {
	Endpoint string // "token", "registration"
	Status   int
	Location string
}

func (e *EndpointRedirectError) Error() string {
	return fmt.Sprintf("the %s endpoint redirected (%d) to %s, where the request is not sent again", e.Endpoint, e.Status, e.Location)
}

// bare returns the refusal of the guard or of a redirect without the
// *url.Error around it, which would repeat the URL the refusal names.
func bare(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	var moved *EndpointRedirectError
	var far *UnreachableError
	if errors.As(ue.Err, &moved) || errors.As(ue.Err, &far) {
		return ue.Err
	}
	return err
}

// checkMetadataURL checks the address of a metadata document, or an
// issuer, given by a peer: checkURL's rules, and none of what a
// metadata address or an issuer has no use for (RFC 8414 §2: no query
// or fragment), which would only serve to make the request something
// else (?confirm=yes).
func checkMetadataURL(what, raw string, insecure bool) error {
	if err := checkURL(what, raw, insecure); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("auth: the %s %s has user information, a query or a fragment, which a metadata address does not have", what, shownURL(u))
	}
	return nil
}
