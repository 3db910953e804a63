package serverapi

import "context"

// remoteAddrKey is the context key of an Origin's RemoteAddr.
type remoteAddrKey struct{}

// RemoteAddrOf returns the RemoteAddr of the Origin ctx holds.
func RemoteAddrOf(ctx context.Context) string {
	a, _ := ctx.Value(remoteAddrKey{}).(string)
	return a
}
