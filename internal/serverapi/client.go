package serverapi

import (
	"context"
	"net/netip"
)

// callerKey is the context key of a request's authenticated caller.
type callerKey struct{}

// remoteAddrKey is the context key of an Origin's RemoteAddr.
type remoteAddrKey struct{}

// WithCaller returns ctx carrying id, the stable name of the caller that
// ferry's authorization middleware authenticated (its token's issuer and
// subject): the server binds tasks to it, and the bounds a server shares
// among its clients count it as one client.
func WithCaller(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callerKey{}, id)
}

// CallerOf returns the caller WithCaller put in ctx.
func CallerOf(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(callerKey{}).(string)
	return id, ok
}

// RemoteAddrOf returns the RemoteAddr of the Origin ctx holds.
func RemoteAddrOf(ctx context.Context) string {
	a, _ := ctx.Value(remoteAddrKey{}).(string)
	return a
}

// ClientKey names who a request comes from, for the bounds a server
// shares among its clients (tasks, sessions): "caller:" and the
// authenticated caller in ctx when there is one, else "addr:" and the
// client's address (remoteAddr, an http.Request's), IPv6 addresses by
// their /64 (one host commonly has a whole /64 to pick from); "" when
// neither is known (a stream: stdio, in-memory). Clients behind one proxy
// share its address, and so its key.
func ClientKey(ctx context.Context, remoteAddr string) string {
	if id, ok := CallerOf(ctx); ok {
		return "caller:" + id
	}
	if remoteAddr == "" {
		return ""
	}
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return "addr:" + remoteAddr
	}
	a := ap.Addr().Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "addr:" + p.String()
	}
	return "addr:" + a.String()
}
