package limit

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// inProcess serves a client's HTTP requests with a handler, without a
// network: inside a synctest bubble, time moves only when every
// goroutine waits, which a socket read never counts as.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// callerHeader names the caller of a test request, as authentication
// would.
func callerHeader(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("X-Caller"); id != "" {
			r = r.WithContext(intercept.WithCaller(r.Context(), &intercept.Caller{ID: id, Subject: "sub-" + id}))
		}
		next.ServeHTTP(w, r)
	})
}

// fixture is a gateway with a Limiter, as ferry serve sets it up, in
// front of one server "s" in this process (tools echo, other, hold).
type fixture struct {
	l       *Limiter
	h       http.Handler
	release chan struct{} // ends a call of "hold"
}

func newFixture(t testing.TB, cfg *config.Limits) *fixture {
	return newGateway(t, cfg, true, nil)
}

// newGateway is the fixture, without the limiter when not limited, with
// views.
func newGateway(t testing.TB, cfg *config.Limits, limited bool, views *view.Set) *fixture {
	t.Helper()
	p, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{l: New(p, nil), release: make(chan struct{})}
	up := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	for _, name := range []string{"echo", "other"} {
		up.AddTool(&protocol.Tool{Name: name}, func(context.Context, *server.Request, jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("ok")}}, nil
		})
	}
	up.AddTool(&protocol.Tool{Name: "hold"}, func(ctx context.Context, _ *server.Request, _ jsontext.Value) (*protocol.CallToolResult, error) {
		select {
		case <-f.release:
		case <-ctx.Done():
		}
		return &protocol.CallToolResult{}, nil
	})
	var mu sync.Mutex
	var pipes []jsonrpc.Stream
	opts := &gateway.Options{
		Auth: callerHeader,
		Host: host.Options{RequestTimeout: -1, Transport: func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, b := memory.NewPipe(jsonrpc.Limits{})
			mu.Lock()
			pipes = append(pipes, a)
			mu.Unlock()
			go up.Run(context.Background(), a)
			return b, nil
		}},
		HTTP:  streamablehandler.Options{DisableHostCheck: true},
		Views: views,
	}
	if limited {
		opts.Limit = f.l.HTTP
		opts.Middleware = []intercept.Middleware{f.l.Middleware}
	}
	g, err := gateway.New([]*config.Server{{Name: "s", Transport: config.Stdio, Command: "in-process"}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close(context.Background())
		mu.Lock()
		for _, p := range pipes {
			p.Close() // the server's end: its Run returns
		}
		mu.Unlock()
		up.Close()
	})
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.h = g
	return f
}

// connect opens a stateless client of path for caller.
func (f *fixture) connect(t testing.TB, path, caller string) *client.Client {
	t.Helper()
	tr := &streamable.Transport{URL: "http://127.0.0.1" + path, Client: &http.Client{Transport: inProcess{f.h}}, Header: http.Header{"X-Caller": {caller}}}
	c, err := client.Connect(context.Background(), tr, &client.Options{ProtocolVersion: protocol.LatestVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// post sends one POST the limiter counts, and returns its status and
// Retry-After.
func (f *fixture) post(path, caller string) (int, string) {
	r := httptest.NewRequest("POST", "http://127.0.0.1"+path, strings.NewReader(`{}`))
	r.Header.Set("X-Caller", caller)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	return rec.Code, rec.Header().Get("Retry-After")
}

// limited returns the limit error of err and its data.
func limited(t *testing.T, err error) (string, int64) {
	t.Helper()
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeLimited {
		t.Fatalf("error %v, want a %d error", err, CodeLimited)
	}
	var data struct {
		Limit        string `json:"limit"`
		RetryAfter   int64  `json:"retryAfter"`
		RetryAfterMs int64  `json:"retryAfterMs"`
	}
	if err := json.Unmarshal(je.Data, &data); err != nil {
		t.Fatalf("data %s: %v", je.Data, err)
	}
	return data.Limit, data.RetryAfterMs
}

// A per-caller request rate: 429 with Retry-After before the body is
// read, for that caller only, and let through again once the bucket has
// a token.
func TestRequestRateHitAndRecovered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, &config.Limits{Rules: []config.LimitRule{{Per: []string{"caller"}, Rate: "2/s"}}})
		steps := []struct {
			wait   time.Duration
			caller string
			status int
			retry  string
		}{
			{0, "alice", 400, ""}, // let through: the handler refuses the body
			{0, "alice", 400, ""},
			{0, "alice", 429, "1"},
			{0, "bob", 400, ""}, // bob has a bucket of his own
			{400 * time.Millisecond, "alice", 429, "1"},
			{100 * time.Millisecond, "alice", 400, ""}, // half a second: one token
			{0, "alice", 429, "1"},
			{10 * time.Second, "alice", 400, ""}, // full again, two at most
			{0, "alice", 400, ""},
			{0, "alice", 429, "1"},
		}
		for i, s := range steps {
			time.Sleep(s.wait)
			status, retry := f.post("/mcp", s.caller)
			if status != s.status || retry != s.retry {
				t.Fatalf("step %d: %d, Retry-After %q; want %d, %q", i, status, retry, s.status, s.retry)
			}
		}
	})
}

// Rules with tools count tool calls; the error's data says when to
// retry; the count is per caller and per tool as Per says; a call on
// /servers/NAME/mcp counts as NAME__TOOL.
func TestCallRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, &config.Limits{Rules: []config.LimitRule{
			{Name: "slow down", Tools: []string{"s__*"}, Per: []string{"caller", "tool"}, Rate: "1/m"},
		}})
		alice, bob := f.connect(t, "/servers/s/mcp", "alice"), f.connect(t, "/servers/s/mcp", "bob")
		ctx := context.Background()
		mustCall := func(c *client.Client, tool string) {
			t.Helper()
			if _, err := c.Call(ctx, tool, nil); err != nil {
				t.Fatal(err)
			}
		}
		mustCall(alice, "echo")
		mustCall(alice, "other") // another tool, another count
		mustCall(bob, "echo")
		time.Sleep(20 * time.Second)
		_, err := alice.Call(ctx, "echo", nil)
		name, ms := limited(t, err)
		// The gateway's own timers may move the bubble's clock a little.
		if name != "slow down" || ms > 40000 || ms < 39000 || !strings.Contains(err.Error(), "retry in 40s") {
			t.Fatalf("refused by %q, retry after %dms (%v); want slow down, 40000", name, ms, err)
		}
		time.Sleep(40 * time.Second)
		mustCall(alice, "echo")
		// On the aggregated endpoint the same tool is s__echo: one count
		// for both endpoints.
		agg := f.connect(t, "/mcp", "alice")
		_, err = agg.Call(ctx, "s__echo", nil)
		limited(t, err)
		mustCall(f.connect(t, "/mcp", "carol"), "s__echo")
	})
}

// A concurrency limit refuses the call beyond it at once and lets the
// next through when one ends.
func TestConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, &config.Limits{Rules: []config.LimitRule{{Per: []string{"caller"}, Concurrency: 2}}})
		c := f.connect(t, "/mcp", "alice")
		ctx := context.Background()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := c.Call(ctx, "s__hold", nil); err != nil {
					t.Error(err)
				}
			})
		}
		synctest.Wait() // both held
		_, err := c.Call(ctx, "s__echo", nil)
		if _, ms := limited(t, err); ms != 1000 {
			t.Fatalf("retry after %dms, want 1000", ms)
		}
		if _, err := f.connect(t, "/mcp", "bob").Call(ctx, "s__echo", nil); err != nil {
			t.Fatal(err) // bob's calls are his own
		}
		f.release <- struct{}{}
		synctest.Wait()
		if _, err := c.Call(ctx, "s__echo", nil); err != nil {
			t.Fatal(err)
		}
		close(f.release)
		wg.Wait()
		if n := len(f.l.conc.n); n != 0 {
			t.Fatalf("%d counts left after every call ended", n)
		}
	})
}

// Callers and views select what a rule counts; a view's name comes from
// the path.
func TestRuleMatching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, &config.Limits{Rules: []config.LimitRule{
			{Callers: []string{"sub-alice"}, Views: []string{"support"}, Rate: "1/h"},
		}})
		tests := []struct {
			path, caller string
			limited      bool
		}{
			{"/views/support/mcp", "alice", false},
			{"/views/support/mcp", "alice", true},
			{"/views/other/mcp", "alice", false},
			{"/mcp", "alice", false},
			{"/views/support/mcp", "bob", false},
			{"/views/support/mcp", "bob", false},
		}
		for i, tt := range tests {
			if status, _ := f.post(tt.path, tt.caller); (status == 429) != tt.limited {
				t.Fatalf("%d: %s as %s: %d, want limited %v", i, tt.path, tt.caller, status, tt.limited)
			}
		}
	})
}

// Set swaps the rules: a rule that stays keeps its count, one removed
// stops counting, no rules at all let everything through.
func TestSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		keep := config.LimitRule{Per: []string{"caller"}, Rate: "1/h"}
		f := newFixture(t, &config.Limits{Rules: []config.LimitRule{keep}})
		f.post("/mcp", "alice")
		if status, _ := f.post("/mcp", "alice"); status != 429 {
			t.Fatalf("%d, want 429", status)
		}
		renamed := keep
		renamed.Name = "renamed"
		p, err := Compile(&config.Limits{Rules: []config.LimitRule{{Rate: "100/s"}, renamed}})
		if err != nil {
			t.Fatal(err)
		}
		f.l.Set(p)
		if status, _ := f.post("/mcp", "alice"); status != 429 {
			t.Fatalf("after a reload keeping the rule: %d, want 429", status)
		}
		f.l.Set(nil)
		if status, _ := f.post("/mcp", "alice"); status == 429 {
			t.Fatalf("without rules: %d", status)
		}
		if _, err := Compile(&config.Limits{Rules: []config.LimitRule{{Rate: "x"}}}); err == nil {
			t.Fatal("a bad rule compiled")
		}
	})
}

// The local buckets are dropped once full again, so that callers that
// came once do not stay in memory.
func TestLocalPrunes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewLocal()
		ctx := context.Background()
		for i := range 3 * minSweep {
			b := []Bucket{{Key: string(rune(i)), Rate: 1, Burst: 1}}
			if i, _, _ := s.Take(ctx, time.Now(), b); i != -1 {
				t.Fatal("a new bucket refused")
			}
			if i%minSweep == 0 {
				time.Sleep(2 * time.Second)
			}
		}
		if n := s.Len(); n > 2*minSweep {
			t.Fatalf("%d buckets kept", n)
		}
	})
}

// On a view, a rule names a tool as the aggregated endpoint does
// (SERVER__TOOL), whatever the view calls it, and counts the view's
// calls only.
func TestViewCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		views, err := view.New([]*config.View{{Name: "support", Tools: []config.ViewItem{{From: "s__echo", Name: "hello"}}}})
		if err != nil {
			t.Fatal(err)
		}
		f := newGateway(t, &config.Limits{Rules: []config.LimitRule{
			{Name: "support echo", Tools: []string{"s__echo"}, Views: []string{"support"}, Per: []string{"caller"}, Rate: "1/h"},
		}}, true, views)
		ctx := context.Background()
		v := f.connect(t, "/views/support/mcp", "alice")
		if _, err := v.Call(ctx, "hello", nil); err != nil {
			t.Fatal(err)
		}
		_, err = v.Call(ctx, "hello", nil)
		if name, _ := limited(t, err); name != "support echo" {
			t.Fatalf("refused by %q", name)
		}
		agg := f.connect(t, "/mcp", "alice")
		for range 2 {
			if _, err := agg.Call(ctx, "s__echo", nil); err != nil {
				t.Fatalf("on /mcp, not the view: %v", err)
			}
		}
	})
}
