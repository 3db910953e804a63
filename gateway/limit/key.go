package limit

import (
	"context"
	"net/netip"

	"github.com/ferrymcp/ferry/intercept"
)

// clientKey names whom a request's counts are kept for: "caller:" and
// the ID of its authenticated caller, else "addr:" and the client's
// address, an IPv6 address by its /64 (one host commonly has a whole /64
// to pick from), as the transports name a client for their bounds.
func clientKey(ctx context.Context, remoteAddr string) string {
	if c, ok := intercept.CallerFrom(ctx); ok {
		return "caller:" + c.ID
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
