package resourceserver

import (
	"context"
	"testing"
)

// BenchmarkJWTVerify is the cost the middleware adds to each request:
// parsing and checking an ES256 access token with a cached key.
func BenchmarkJWTVerify(b *testing.B) {
	t := &testing.T{}
	is := newIssuer(t)
	defer is.srv.Close()
	v := &JWT{Issuer: is.srv.URL}
	tok := is.token(t, is.key, "k1", is.claims("https://rs/mcp"))
	ctx := context.Background()
	if _, err := v.Verify(ctx, tok, "https://rs/mcp"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := v.Verify(ctx, tok, "https://rs/mcp"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
