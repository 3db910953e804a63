package serverapi

import (
	"context"
	"net/netip"

	"github.com/ferrymcp/ferry/intercept"
)

// remoteAddrKey is the context key of an Origin's RemoteAddr.
type remoteAddrKey struct{}

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
	if c, ok := intercept.CallerFrom(ctx); ok {
		return "caller:" + c.ID
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
