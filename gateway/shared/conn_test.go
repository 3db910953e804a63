package shared

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/gateway"
)

// must runs a command on s's pool for a test.
func must(t *testing.T, s *Store, name string, args ...any) any {
	t.Helper()
	r, err := s.do(context.Background(), name, args...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

// pttl is how long key has to live.
func pttl(t *testing.T, s *Store, key string) time.Duration {
	t.Helper()
	ms, err := redis.Int64(must(t, s, "PTTL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(ms) * time.Millisecond
}

// The URLs go-redis took: redis://, rediss:// and unix://, with user,
// password and database; errors never hold the URL.
func TestParseURL(t *testing.T) {
	tests := []struct {
		url  string
		want endpoint
		err  string
	}{
		{url: "redis://", want: endpoint{network: "tcp", address: "localhost:6379"}},
		{url: "redis://r.example:7000/2", want: endpoint{network: "tcp", address: "r.example:7000", db: 2}},
		{url: "rediss://alice:s3cret@r.example", want: endpoint{network: "tcp", address: "r.example:6379", user: "alice", password: "s3cret", tls: true}},
		{url: "redis://:s3cret@[::1]:6380?db=4", want: endpoint{network: "tcp", address: "[::1]:6380", password: "s3cret", db: 4}},
		{url: "unix:///run/redis.sock", want: endpoint{network: "unix", address: "/run/redis.sock"}},
		{url: "unix://alice:s3cret@/run/redis.sock?db=1", want: endpoint{network: "unix", address: "/run/redis.sock", user: "alice", password: "s3cret", db: 1}},
		{url: "unix:///run/redis.sock?password=s3cret", want: endpoint{network: "unix", address: "/run/redis.sock", password: "s3cret"}},
		{url: "http://:s3cret@r.example", err: "not a redis://"},
		{url: "r.example:6379", err: "not a redis://"},
		{url: "unix://:s3cret@", err: "names no socket"},
		{url: "redis://:s3cret@r.example/x", err: "database is not a number"},
		{url: "redis://:s3cret@r.example?db=-1", err: "database is not a number"},
		{url: "redis://r.example?password=s3cret", err: `option "password"`},
		{url: "redis://r.example?dial_timeout=s3cret", err: `option "dial_timeout"`},
		{url: "redis://:s3cret@r.example:port\x7f", err: "does not parse"},
	}
	for _, tt := range tests {
		got, err := parseURL(tt.url)
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("%q: %+v, %v; want %+v", tt.url, got, err, tt.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%q: %v, want an error saying %q", tt.url, err, tt.err)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: the error holds the password: %v", tt.url, err)
		}
	}
}

// The user, password and database of the URL reach Redis; a wrong
// password is refused without the error telling it.
func TestOpenLogsInAndSelects(t *testing.T) {
	dir := t.TempDir()
	redisAt(t, dir, "--requirepass", "s3cret", "--user", "alice", "on", ">pw2", "~*", "&*", "+@all")
	sock := filepath.Join(dir, "redis.sock")
	ctx := context.Background()
	tests := []struct {
		url, user string
		db        int
	}{
		{"unix://:s3cret@" + sock + "?db=3", "default", 3},
		{"unix://" + sock + "?password=s3cret", "default", 0},
		{"unix://alice:pw2@" + sock + "?db=1", "alice", 1},
	}
	for _, tt := range tests {
		s := open(t, tt.url)
		if who, _ := redis.String(must(t, s, "ACL", "WHOAMI"), nil); who != tt.user {
			t.Errorf("%s: logged in as %q, want %q", tt.url, who, tt.user)
		}
		info, _ := redis.String(must(t, s, "CLIENT", "INFO"), nil)
		if !strings.Contains(info, " db="+string(rune('0'+tt.db))+" ") {
			t.Errorf("%s: %s, want db=%d", tt.url, info, tt.db)
		}
	}
	for _, url := range []string{"unix://:wrong-one@" + sock, "unix://" + sock} {
		_, err := Open(ctx, url, nil)
		if err == nil {
			t.Fatalf("%s: opened", url)
		}
		if strings.Contains(err.Error(), "wrong-one") {
			t.Errorf("the error holds the password: %v", err)
		}
	}
}

// After Redis restarts, the first command goes through (its one retry
// meets a live connection, the idle ones are checked first) and the
// subscription is made again by itself.
func TestRedisRestarted(t *testing.T) {
	dir := t.TempDir()
	stop := redisAt(t, dir)
	url := "unix://" + filepath.Join(dir, "redis.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := open(t, url), open(t, url)
	got := make(chan gateway.SessionChange, 8)
	go b.Watch(ctx, func(c gateway.SessionChange) { got <- c })
	hear := func(key string) {
		t.Helper()
		for {
			if err := a.Change(ctx, gateway.SessionChange{Key: key, Op: gateway.ChangeEnd}, time.Minute); err != nil {
				t.Fatal(err)
			}
			select {
			case c := <-got:
				if c.Key == key {
					return
				}
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
				t.Fatalf("the watching replica never heard %s", key)
			}
		}
	}
	hear("before")
	c1, c2 := a.pool.Get(), a.pool.Get() // two connections idle in the pool
	must(t, a, "PING")
	c1.Close()
	c2.Close()
	stop()
	redisAt(t, dir)
	if _, err := a.Load(ctx, "after"); err != nil {
		t.Fatalf("the first command after the restart: %v", err)
	}
	hear("after")
}

// Callers past the pool's bound wait for a connection at most the
// store's timeout, then fail saying so.
func TestPoolBounded(t *testing.T) {
	url, _ := redisServer(t)
	defer func(n int) { poolSize = n }(poolSize)
	poolSize = 1
	s, err := Open(context.Background(), url, &Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held := s.pool.Get()
	if _, err := s.do(context.Background(), "PING"); err == nil || !strings.Contains(err.Error(), "no connection to Redis within 100ms") {
		t.Errorf("a command with the pool taken: %v", err)
	}
	held.Close()
	must(t, s, "PING")
}

// Closing the store ends its Watch, whatever the context it was given.
func TestCloseEndsWatch(t *testing.T) {
	url, _ := redisServer(t)
	s, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		s.Watch(context.Background(), func(gateway.SessionChange) {})
		close(ended)
	}()
	s.Close()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("Watch goes on after Close")
	}
}
