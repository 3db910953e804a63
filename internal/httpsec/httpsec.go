// Package httpsec holds the protections against DNS rebinding that every
// HTTP transport of ferry applies to each request.
//
// The specification asks for them in both HTTP transports: "Servers MUST
// validate the Origin header on all incoming connections to prevent DNS
// rebinding attacks" (2024-11-05, HTTP with SSE) and "If the Origin header
// is present and invalid, servers MUST respond with HTTP 403 Forbidden"
// (Streamable HTTP).
//
// The policy of [Check]:
//
//   - When the server listens on a loopback address, the Host header must
//     name a loopback host (localhost, 127.0.0.1, [::1]) or be listed in
//     [Options.AllowedHosts]: a page on evil.example that rebinds its
//     name to 127.0.0.1 still sends Host: evil.example.
//   - An Origin header, when present, must be listed in
//     [Options.AllowedOrigins], or be a loopback origin (server on
//     loopback), or name the request's own host or an allowed host
//     (other servers).
package httpsec

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// Options extend the default policy.
type Options struct {
	// AllowedOrigins are Origin values accepted in addition to the
	// default policy, e.g. "https://app.example.com".
	AllowedOrigins []string
	// AllowedHosts are Host values (host or host:port, as sent) accepted
	// in addition to the default policy, for servers behind a reverse
	// proxy that keeps the public host name.
	AllowedHosts []string
}

// Check applies the policy to r. When r is refused it answers 403
// Forbidden with a JSON-RPC error body and returns false.
func Check(w http.ResponseWriter, r *http.Request, opts *Options) bool {
	if opts == nil {
		opts = &Options{}
	}
	msg := Refusal(r, opts)
	if msg == "" {
		return true
	}
	b, _ := jsonrpc.AppendMessage(nil, &jsonrpc.Message{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	w.Write(b)
	return false
}

// Refusal returns why the policy refuses r, or "" when it accepts it.
func Refusal(r *http.Request, opts *Options) string {
	loopback := ListensOnLoopback(r)
	if loopback && !IsLoopbackHost(HostOnly(r.Host)) && !slices.Contains(opts.AllowedHosts, r.Host) {
		return "forbidden: Host " + quote(r.Host) + " is not allowed"
	}
	// Every Origin header is checked: a request may carry two, and a
	// check of the first alone would let the second through to whatever
	// reads it later (a proxy, a middleware, the handler).
	origins := r.Header.Values("Origin")
	if len(origins) > 1 {
		return "forbidden: more than one Origin header"
	}
	if len(origins) == 1 && !originAllowed(origins[0], r, loopback, opts) {
		return "forbidden: Origin " + quote(origins[0]) + " is not allowed"
	}
	return ""
}

// quote bounds and quotes a header value for an error message: it is the
// peer's text, which may be long or hold control characters.
func quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strconv.Quote(s)
}

func originAllowed(origin string, r *http.Request, loopback bool, opts *Options) bool {
	if slices.Contains(opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes the opaque origin "null"
	}
	if loopback {
		return IsLoopbackHost(u.Hostname())
	}
	return strings.EqualFold(u.Host, r.Host) || slices.Contains(opts.AllowedHosts, u.Host)
}

// ListensOnLoopback reports whether r arrived on a loopback address.
func ListensOnLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// HostOnly returns the host of a host[:port], without brackets.
func HostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// IsLoopbackHost reports whether h is "localhost" or a loopback IP.
func IsLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
