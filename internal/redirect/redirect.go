// Package redirect is the redirect policy of ferry's HTTP client
// transports. An MCP client's requests carry what must not reach another
// server (the session id, an Authorization header, the Transport's own
// headers, the body of a call), and net/http's client follows a redirect
// to any host with most of them. The policy: follow a redirect to the
// endpoint's own origin (scheme, host and port) that keeps the request's
// method, such as a 307 or 308 from /mcp to /mcp/; refuse the others with
// a *httperr.RedirectError, unless the caller chose to follow redirects
// across origins, which then go without credentials.
package redirect

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/ferrymcp/ferry/transport/httperr"
)

// maxRedirects is net/http's own bound.
const maxRedirects = 10

// Policy applies the redirect policy to the requests of one transport.
type Policy struct {
	// AcrossOrigins follows redirects to other origins, without the
	// headers Strip names, Authorization, Proxy-Authorization and Cookie.
	AcrossOrigins bool
	// Strip names the headers that do not follow a redirect to another
	// origin: the Transport's Header, the session id...
	Strip []string
	// Keep, when set, tells which of Strip may still go to origin to.
	Keep func(header string, to *url.URL) bool
	// Log notes the redirects followed. Nil discards them.
	Log *slog.Logger
	// Then is the caller's own CheckRedirect, consulted after the policy.
	Then func(req *http.Request, via []*http.Request) error
}

// Client returns a copy of c (nil: http.DefaultClient) whose
// CheckRedirect applies p before c's own.
func Client(c *http.Client, p *Policy) *http.Client {
	if c == nil {
		c = http.DefaultClient
	}
	cp := *c
	pp := *p
	pp.Then = c.CheckRedirect
	if pp.Log == nil {
		pp.Log = slog.New(slog.DiscardHandler)
	}
	cp.CheckRedirect = pp.check
	return &cp
}

func (p *Policy) check(req *http.Request, via []*http.Request) error {
	first := via[0]
	refuse := func(reason string) error {
		e := &httperr.RedirectError{Method: first.Method, URL: first.URL.String(), Location: req.URL.String(), Reason: reason}
		if r := req.Response; r != nil {
			e.StatusCode, e.Status = r.StatusCode, r.Status
		}
		return e
	}
	switch {
	case len(via) >= maxRedirects:
		return refuse(fmt.Sprintf("more than %d redirects", maxRedirects))
	case req.Method != first.Method:
		return refuse(fmt.Sprintf("it would turn the %s into a %s", first.Method, req.Method))
	case !SameOrigin(req.URL, first.URL):
		if !p.AcrossOrigins {
			return refuse("another origin (a client may choose to follow redirects across origins, without its credentials)")
		}
		for _, k := range p.Strip {
			if p.Keep == nil || !p.Keep(k, req.URL) {
				req.Header.Del(k)
			}
		}
		for _, k := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
			req.Header.Del(k)
		}
		p.Log.Info("following a redirect to another origin, without credentials", "from", first.URL.Redacted(), "to", req.URL.Redacted())
	default:
		p.Log.Debug("following a redirect", "from", via[len(via)-1].URL.Redacted(), "to", req.URL.Redacted())
	}
	if p.Then != nil {
		return p.Then(req, via)
	}
	return nil
}

// Followable reports whether a redirect answer, as the lean HTTP/1.1
// client gets it, may be followed under p: a 307 or 308, which keep the
// method, to the same origin unless p follows across origins.
func (p *Policy) Followable(from *url.URL, resp *http.Response) bool {
	if resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect {
		return false
	}
	loc, err := from.Parse(resp.Header.Get("Location"))
	return err == nil && resp.Header.Get("Location") != "" && (p.AcrossOrigins || SameOrigin(loc, from))
}

// Refused describes a redirect answer a transport got and does not
// follow (its client returned it, or the lean client did).
func Refused(method string, from *url.URL, resp *http.Response, acrossOrigins bool) *httperr.RedirectError {
	e := &httperr.RedirectError{Method: method, URL: from.String(), StatusCode: resp.StatusCode, Status: resp.Status}
	loc := resp.Header.Get("Location")
	u, err := from.Parse(loc)
	switch {
	case loc == "":
		e.Reason = "no Location"
	case err != nil:
		e.Location, e.Reason = loc, "an invalid Location"
	case resp.StatusCode != http.StatusTemporaryRedirect && resp.StatusCode != http.StatusPermanentRedirect:
		e.Location, e.Reason = u.String(), "only 307 and 308 keep the method of a "+method
	case !acrossOrigins && !SameOrigin(u, from):
		e.Location, e.Reason = u.String(), "another origin (a client may choose to follow redirects across origins, without its credentials)"
	default:
		e.Location, e.Reason = u.String(), "the HTTP client did not follow it"
	}
	return e
}

// SameOrigin compares scheme, host and port, the default port implied.
func SameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}
