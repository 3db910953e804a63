package gateway

import (
	"context"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
)

// Middleware learns which endpoint a request came to, and the server and
// the server's own name behind the names it shows.
func TestEndpointOf(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, ir *intercept.Request) (intercept.Result, error) {
			if ep := EndpointOf(ctx); ep != nil && (ir.Method == protocol.MethodToolsCall || ir.Method == protocol.MethodResourcesRead) {
				server, name, ok := ep.Resolver(ctx, ir, ir.Method)(ir.Name())
				mu.Lock()
				seen = append(seen, ep.Server+"|"+server+"|"+name+"|"+ep.Separator()+"|"+map[bool]string{true: "ok"}[ok])
				mu.Unlock()
			}
			return next(ctx, ir)
		}
	}
	up, _ := remote(t, "r", false)
	_, url := start(t, []*config.Server{up}, &Options{Middleware: []intercept.Middleware{record}})
	ctx := ctxT(t)
	agg := connect(t, url+"/mcp", protocol.LatestLegacyVersion, nil)
	own := connect(t, url+"/servers/r/mcp", protocol.Version20260728, nil)
	text(t)(agg.Call(ctx, "r__echo", map[string]string{"message": "m"}))
	text(t)(own.Call(ctx, "echo", map[string]string{"message": "m"}))
	if _, err := agg.ReadResource(ctx, "test://r/version"); err != nil {
		t.Fatal(err)
	}
	agg.Call(ctx, "nobody__echo", nil)
	want := []string{"|r|echo|__|ok", "r|r|echo|__|ok", "|r|test://r/version|__|ok", "|||__|"}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d: %q, want %q", i, seen[i], want[i])
		}
	}
}
