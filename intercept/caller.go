package intercept

import (
	"context"

	"github.com/ferrymcp/ferry/internal/serverapi"
)

// WithCaller returns ctx, the context of an HTTP request to an MCP
// server, naming id as the caller that the authorization in front of the
// server authenticated (a token's issuer and subject, say). The server
// then reports it as the Caller of the requests that HTTP request
// carries, binds the tasks they start to it, and counts it as one client
// in the bounds its clients share. ferry's resource server
// (auth/resourceserver) calls it for every request it lets through; other
// authorization middleware may.
func WithCaller(ctx context.Context, id string) context.Context {
	return serverapi.WithCaller(ctx, id)
}
