package limit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
)

// BenchmarkLimit is a stateless tools/call through the limiter's two
// middlewares to an in-process server, over the Streamable HTTP handler
// without a network: with no limiter, a limiter without rules (what
// ferry serve runs without "limits"), and one limit of each kind, none
// of them reached. The difference of calls/s is what a limit costs.
func BenchmarkLimit(b *testing.B) {
	never := "1000000000/s"
	cases := []struct {
		name    string
		limiter bool
		rules   []config.LimitRule
	}{
		{"none", false, nil},
		{"no-rules", true, nil},
		{"request-rate", true, []config.LimitRule{{Per: []string{"caller"}, Rate: never}}},
		{"call-rate", true, []config.LimitRule{{Tools: []string{"*"}, Per: []string{"caller", "tool"}, Rate: never}}},
		{"concurrency", true, []config.LimitRule{{Per: []string{"caller"}, Concurrency: 1 << 20}}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c := newGateway(b, &config.Limits{Rules: tc.rules}, tc.limiter, nil).connect(b, "/mcp", "alice")
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Call(ctx, "s__echo", nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkDecision is the limiter's own work for one request, without
// the gateway around it (whose time is too noisy on a shared machine to
// show it): an HTTP request through the HTTP middleware, and the
// admission of a tools/call (concurrency, then rates).
func BenchmarkDecision(b *testing.B) {
	never := "1000000000/s"
	ctx := intercept.WithCaller(context.Background(), &intercept.Caller{ID: "alice"})
	r := httptest.NewRequest("POST", "/mcp", nil).WithContext(ctx)
	w := httptest.NewRecorder()
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, tc := range []struct {
		name string
		rule *config.LimitRule
	}{
		{"no-rules", nil},
		{"request-rate", &config.LimitRule{Per: []string{"caller"}, Rate: never}},
		{"call-rate", &config.LimitRule{Tools: []string{"*"}, Per: []string{"caller", "tool"}, Rate: never}},
		{"concurrency", &config.LimitRule{Per: []string{"caller"}, Concurrency: 1 << 20}},
	} {
		cfg := &config.Limits{}
		if tc.rule != nil {
			cfg.Rules = append(cfg.Rules, *tc.rule)
		}
		p, err := Compile(cfg)
		if err != nil {
			b.Fatal(err)
		}
		l := New(p, nil)
		b.Run("http/"+tc.name, func(b *testing.B) {
			h := l.HTTP(noop)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
		b.Run("call/"+tc.name, func(b *testing.B) {
			q := &request{caller: "caller:alice", ids: []string{"alice"}, tool: "s__echo"}
			b.ReportAllocs()
			for b.Loop() {
				if p := l.policy.Load(); p != nil {
					release, ref := l.admitCall(ctx, p, q)
					if ref != nil {
						b.Fatal(ref)
					}
					release()
				}
			}
		})
	}
}
