package shared

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway/limit"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// Replicas share their buckets through Redis: one takes, the other sees
// it; a take is all or nothing; time refills; keys expire.
func TestSharedTokenBuckets(t *testing.T) {
	url, _ := redisServer(t)
	a, b := open(t, url).Limits(), open(t, url).Limits()
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	x := limit.Bucket{Key: "x", Rate: 2, Burst: 2} // 2 a second
	y := limit.Bucket{Key: "y\x00caller:\xff", Rate: 1.0 / 60, Burst: 1}
	steps := []struct {
		store   limit.Store
		at      time.Duration
		buckets []limit.Bucket
		refused int
		wait    time.Duration
	}{
		{a, 0, []limit.Bucket{x}, -1, 0},
		{b, 0, []limit.Bucket{x}, -1, 0},
		{a, 0, []limit.Bucket{x}, 0, 500 * time.Millisecond},
		{b, 250 * time.Millisecond, []limit.Bucket{y, x}, 1, 250 * time.Millisecond},
		{a, 500 * time.Millisecond, []limit.Bucket{y, x}, -1, 0},                   // both had a token: both spent
		{b, 500 * time.Millisecond, []limit.Bucket{x, y}, 0, time.Minute},          // neither has
		{b, 400 * time.Millisecond, []limit.Bucket{x}, 0, 500 * time.Millisecond},  // a clock behind takes no time back
		{a, time.Second, []limit.Bucket{y}, 0, time.Minute - 500*time.Millisecond}, // y alone
		{b, time.Minute + 500*time.Millisecond, []limit.Bucket{x, y}, -1, 0},       // refilled
		{a, time.Minute + 500*time.Millisecond, []limit.Bucket{x}, -1, 0},          // x had two again
		{a, time.Minute + 500*time.Millisecond, []limit.Bucket{x}, 0, 500 * time.Millisecond},
	}
	for i, s := range steps {
		refused, wait, err := s.store.Take(ctx, t0.Add(s.at), s.buckets)
		if err != nil {
			t.Fatal(err)
		}
		if refused != s.refused || wait != s.wait {
			t.Fatalf("step %d: refused %d, wait %v; want %d, %v", i, refused, wait, s.refused, s.wait)
		}
	}
	st := open(t, url)
	keys, err := redis.Strings(must(t, st, "KEYS", "ferry:limit:*"), nil)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %q, %v; want 2", keys, err)
	}
	for _, k := range keys {
		if ttl := pttl(t, st, k); ttl <= 0 || ttl > time.Minute+time.Second {
			t.Fatalf("%s expires in %v, want within a minute and a second", k, ttl)
		}
	}
}

// counted counts the takes that reach a store.
type counted struct {
	limit.Store
	n atomic.Int32
}

func (c *counted) Take(ctx context.Context, now time.Time, b []limit.Bucket) (int, time.Duration, error) {
	c.n.Add(1)
	return c.Store.Take(ctx, now, b)
}

// limitedHandler is a limiter of one rule, 1/h for everyone, over a
// handler that answers 200.
func limitedHandler(t *testing.T, mode string, o *limit.Options) http.Handler {
	t.Helper()
	p, err := limit.Compile(&config.Limits{RedisDown: mode, Rules: []config.LimitRule{{Rate: "1/h"}}})
	if err != nil {
		t.Fatal(err)
	}
	return limit.New(p, o).HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
}

func post(h http.Handler) int {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", strings.NewReader("{}")))
	return rec.Code
}

// With Redis down, the limits do what redisDown says at once, without
// asking it again for StoreRetry, and say so once in the log.
func TestLimiterRedisDown(t *testing.T) {
	for _, mode := range []string{config.RedisDownLocal, config.RedisDownAllow, config.RedisDownDeny} {
		t.Run(mode, func(t *testing.T) {
			url, stop := redisServer(t)
			store := &counted{Store: open(t, url).Limits()}
			var logs bytes.Buffer
			h := limitedHandler(t, mode, &limit.Options{Store: store, StoreRetry: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if got := []int{post(h), post(h)}; got[0] != 200 || got[1] != 429 {
				t.Fatalf("with Redis: %v, want [200 429]", got)
			}
			stop()
			want := map[string][]int{
				config.RedisDownLocal: {200, 429, 429}, // the local bucket is fresh: one token
				config.RedisDownAllow: {200, 200, 200},
				config.RedisDownDeny:  {429, 429, 429},
			}[mode]
			if got := []int{post(h), post(h), post(h)}; !slices.Equal(got, want) {
				t.Fatalf("with Redis down: %v, want %v", got, want)
			}
			if n := store.n.Load(); n != 3 {
				t.Fatalf("Redis was asked %d times, want 3: twice, and once while down", n)
			}
			if n := strings.Count(logs.String(), "the shared store cannot be reached"); n != 1 {
				t.Fatalf("%d log lines about Redis down, want 1:\n%s", n, logs.String())
			}
		})
	}
}

// Once Redis answers again, the limits are shared again, and the log
// says so.
func TestLimiterRedisBack(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install -y redis-server)")
	}
	dir := t.TempDir()
	start := func() *exec.Cmd {
		sock := filepath.Join(dir, "redis.sock")
		os.Remove(sock)
		cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(sock); err == nil {
				return cmd
			}
			if time.Now().After(deadline) {
				t.Fatal("redis-server did not start")
			}
		}
	}
	first := start()
	a, b := open(t, "unix://"+filepath.Join(dir, "redis.sock")), open(t, "unix://"+filepath.Join(dir, "redis.sock"))
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ha := limitedHandler(t, config.RedisDownLocal, &limit.Options{Store: a.Limits(), StoreRetry: time.Nanosecond, Logger: log})
	hb := limitedHandler(t, config.RedisDownLocal, &limit.Options{Store: b.Limits(), StoreRetry: time.Nanosecond, Logger: log})
	if got := []int{post(ha), post(hb)}; !slices.Equal(got, []int{200, 429}) {
		t.Fatalf("shared: %v, want [200 429]", got)
	}
	first.Process.Kill()
	first.Wait()
	if got := []int{post(ha), post(hb)}; !slices.Equal(got, []int{200, 200}) {
		t.Fatalf("Redis down, each counts on its own: %v, want [200 200]", got)
	}
	start() // empty: the buckets are full again
	if got := []int{post(ha), post(hb)}; !slices.Equal(got, []int{200, 429}) {
		t.Fatalf("Redis back: %v, want [200 429]", got)
	}
	if n := strings.Count(logs.String(), "the shared store answers again"); n != 2 {
		t.Fatalf("%d log lines about Redis back, want 2 (a replica each):\n%s", n, logs.String())
	}
}

// Replicas share their counts of calls in flight: all or nothing, until
// released, or until the lease of a replica that did not release them.
func TestSharedSlots(t *testing.T) {
	url, _ := redisServer(t)
	a, b := open(t, url).Slots(), open(t, url).Slots()
	ctx := context.Background()
	t0 := time.Unix(1_800_000_000, 0)
	lease := time.Minute
	x := limit.Slot{Key: "x", Limit: 2}
	y := limit.Slot{Key: "y\x00caller:\xff", Limit: 1}
	steps := []struct {
		store   limit.SlotStore
		release bool
		at      time.Duration
		id      string
		slots   []limit.Slot
		refused int
	}{
		{a, false, 0, "1", []limit.Slot{x}, -1},
		{b, false, 0, "2", []limit.Slot{y, x}, -1},
		{a, false, 0, "3", []limit.Slot{x}, 0},    // x holds 1 and 2
		{b, false, 0, "3", []limit.Slot{x, y}, 0}, // all or nothing: y not taken
		{a, true, 0, "2", []limit.Slot{y, x}, -1}, // 2 ends on the other replica
		{b, false, 0, "3", []limit.Slot{x, y}, -1},
		{a, false, 0, "4", []limit.Slot{y}, 0},
		{a, false, lease, "4", []limit.Slot{y}, -1}, // 3 lapsed: its replica went
	}
	for i, s := range steps {
		if s.release {
			if err := s.store.Release(ctx, s.id, s.slots); err != nil {
				t.Fatal(err)
			}
			continue
		}
		refused, err := s.store.Acquire(ctx, t0.Add(s.at), s.id, s.slots, lease)
		if err != nil {
			t.Fatal(err)
		}
		if refused != s.refused {
			t.Fatalf("step %d: refused %d, want %d", i, refused, s.refused)
		}
	}
	st := open(t, url)
	keys, err := redis.Strings(must(t, st, "KEYS", "ferry:limit-calls:*"), nil)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %q, %v; want 2", keys, err)
	}
	for _, k := range keys {
		if ttl := pttl(t, st, k); ttl <= 0 || ttl > lease {
			t.Fatalf("%s expires in %v, want within the lease", k, ttl)
		}
	}
}

// With Redis down, a concurrency limit does what redisDown says, as the
// rates do.
func TestLimiterSlotsRedisDown(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want string // the second call while the first is in flight
	}{
		{config.RedisDownLocal, "refused"},
		{config.RedisDownAllow, "ok"},
		{config.RedisDownDeny, "unchecked"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			url, stop := redisServer(t)
			p, err := limit.Compile(&config.Limits{RedisDown: tc.mode, Rules: []config.LimitRule{{Concurrency: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			l := limit.New(p, &limit.Options{Slots: open(t, url).Slots(), StoreRetry: time.Hour})
			release := make(chan struct{})
			held := make(chan struct{}, 1)
			srv := server.New(protocol.Implementation{Name: "s", Version: "1"}, &server.Options{Receiving: []intercept.Middleware{l.Middleware}})
			srv.AddTool(&protocol.Tool{Name: "hold"}, func(ctx context.Context, _ *server.Request, _ jsontext.Value) (*protocol.CallToolResult, error) {
				held <- struct{}{}
				<-release
				return &protocol.CallToolResult{}, nil
			})
			srv.AddTool(&protocol.Tool{Name: "echo"}, func(context.Context, *server.Request, jsontext.Value) (*protocol.CallToolResult, error) {
				return &protocol.CallToolResult{}, nil
			})
			h := streamablehandler.New(srv, &streamablehandler.Options{DisableHostCheck: true})
			ts := httptest.NewServer(h)
			defer ts.Close()
			defer h.Close()
			ctx := context.Background()
			c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL}, &client.Options{ProtocolVersion: protocol.LatestVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Call(ctx, "echo", nil); err != nil {
				t.Fatalf("with Redis: %v", err)
			}
			stop()
			done := make(chan error, 1)
			go func() { _, err := c.Call(ctx, "hold", nil); done <- err }()
			var first error
			select {
			case <-held:
			case first = <-done: // deny refuses it already
			}
			_, err = c.Call(ctx, "echo", nil)
			close(release)
			if first == nil {
				first = <-done
			}
			got := "ok"
			var je *jsonrpc.Error
			switch {
			case errors.As(err, &je) && strings.Contains(je.Message, "cannot be checked"):
				got = "unchecked"
			case errors.As(err, &je) && je.Code == limit.CodeLimited:
				got = "refused"
			case err != nil:
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("the second call with Redis down: %s (%v), want %s", got, err, tc.want)
			}
			if (tc.mode == config.RedisDownDeny) != (first != nil) {
				t.Fatalf("the first call with Redis down: %v", first)
			}
		})
	}
}
