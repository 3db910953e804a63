package shared

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// redisServer runs a redis-server of its own on a Unix socket for the
// test, and returns its URL and a function that stops it.
func redisServer(t *testing.T) (string, func()) {
	t.Helper()
	dir := t.TempDir()
	return "unix://" + filepath.Join(dir, "redis.sock"), redisAt(t, dir)
}

// redisAt runs a redis-server on the socket redis.sock in dir, with
// args, and returns a function that stops it (by SIGKILL, as a crash
// would). It can be started again in the same dir.
func redisAt(t *testing.T, dir string, args ...string) func() {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install -y redis-server)")
	}
	sock := filepath.Join(dir, "redis.sock")
	os.Remove(sock) // a killed server leaves it behind
	cmd := exec.Command(bin, append([]string{"--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return stop
}

func open(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sealerOf returns a sealer of the keys s shares with the other replicas.
func sealerOf(ctx context.Context, t *testing.T, s *Store) *gateway.Sealer {
	t.Helper()
	keys, err := s.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return sealer
}

// The first replica makes the sealing key, the others read it; a
// rotation keeps the previous key.
func TestKeysSharedAndRotated(t *testing.T) {
	url, _ := redisServer(t)
	ctx := context.Background()
	a, b := open(t, url), open(t, url)
	ka, err := a.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ka) != 1 || !bytes.Equal(ka[0], kb[0]) {
		t.Fatalf("two replicas got different keys: %d, %d", len(ka), len(kb))
	}
	for range 2 {
		if err := a.Rotate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	kr, err := b.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(kr) != 2 || bytes.Equal(kr[0], ka[0]) || bytes.Equal(kr[1], ka[0]) {
		t.Errorf("after two rotations: %d keys, want a new current one and the one before it", len(kr))
	}
}

// A Redis that lost the keys (a restart without persistence) gets back
// those in use, not a new key that would strand every session.
func TestKeysSurviveRedisLosingThem(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s := open(t, url)
	keys, err := s.Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s, "FLUSHALL")
	go s.FollowKeys(ctx, sealer, keys, 5*time.Millisecond)
	for n := 0; n == 0; n, _ = redis.Int(s.do(ctx, "EXISTS", s.keysKey())) {
		if ctx.Err() != nil {
			t.Fatal("the keys were not put back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	got, err := open(t, url).Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !bytes.Equal(got[0], keys[0]) {
		t.Error("Redis got a new key, not the one in use")
	}
}

// A change is recorded to expire with its session and reaches the other
// replicas; with Redis gone it fails at once with an error.
func TestChangeLoadWatch(t *testing.T) {
	url, stop := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := open(t, url), open(t, url)
	got := make(chan gateway.SessionChange, 8)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	go b.Watch(wctx, func(c gateway.SessionChange) { got <- c })
	// The subscription is made once Watch runs: publish until it hears.
	changes := []gateway.SessionChange{
		{Key: "s:1", Op: gateway.ChangeLevel, Value: "error", Replica: "a"},
		{Key: "s:1", Op: gateway.ChangeSubscribe, Value: "test://x", Replica: "a"},
		{Key: "s:1", Op: gateway.ChangeSubscribe, Value: "test://y", Replica: "a"},
		{Key: "s:1", Op: gateway.ChangeUnsubscribe, Value: "test://x", Replica: "a"},
	}
	for _, c := range changes {
		if err := a.Change(ctx, c, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	st, err := b.Load(ctx, "s:1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Ended || st.Level != "error" || !slices.Equal(st.Subscriptions, []string{"test://y"}) {
		t.Errorf("loaded %+v", st)
	}
	for _, k := range []string{"ferry:s:1:level", "ferry:s:1:subs"} {
		if ttl := pttl(t, a, k); ttl <= 0 || ttl > time.Hour {
			t.Errorf("%s expires in %v", k, ttl)
		}
	}
	heard := false
	for !heard {
		if err := a.Change(ctx, gateway.SessionChange{Key: "s:2", Op: gateway.ChangeEnd, Replica: "a"}, time.Minute); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-got:
			heard = c.Key == "s:2" && c.Op == gateway.ChangeEnd
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("the other replica heard no change")
		}
	}
	if st, _ := b.Load(ctx, "s:2"); !st.Ended {
		t.Error("the ended session is not")
	}
	stop()
	start := time.Now()
	err = a.Change(ctx, changes[0], time.Hour)
	if err == nil {
		t.Fatal("a change with Redis gone succeeded")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the change failed after %v", d)
	}
}

// A client's log level, set through one replica, holds on the other,
// which opened its copy of the session from the id.
func TestLogLevelSharedByReplicas(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	up := logServer(t)
	store := open(t, url)
	sealer := sealerOf(ctx, t, store)
	lb := &roundRobin{}
	for range 2 {
		g, err := gateway.New([]*config.Server{up}, &gateway.Options{Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: open(t, url)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		if err := g.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		lb.replicas = append(lb.replicas, g)
	}
	ts := httptest.NewServer(lb)
	defer ts.Close()
	var mu sync.Mutex
	var levels []string
	c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{
		ProtocolVersion: protocol.LatestLegacyVersion, LogLevel: protocol.LevelError,
		OnLog: func(p *protocol.LoggingMessageParams) {
			mu.Lock()
			levels = append(levels, string(p.Level))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The level reaches the other replica by pub/sub, a moment after it
	// is set: calls go on until four in a row (two on each replica) log
	// at error only, which without a store never happens.
	quiet := 0
	for quiet < 4 {
		mu.Lock()
		levels = levels[:0]
		mu.Unlock()
		if _, err := c.Call(ctx, "up__log", nil); err != nil {
			t.Fatalf("%v (the client at level error got %v)", err, levels)
		}
		mu.Lock()
		got := slices.Clone(levels)
		mu.Unlock()
		quiet++
		if slices.Contains(got, "info") {
			quiet = 0
		}
	}
}

// logServer is a remote server whose tool logs at info and error.
func logServer(t *testing.T) *config.Server {
	s := server.New(protocol.Implementation{Name: "up", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "log"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Log(ctx, protocol.LevelInfo, "test", "info")
		req.Log(ctx, protocol.LevelError, "test", "error")
		return "logged", nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &config.Server{Name: "up", Transport: config.HTTP, URL: ts.URL + "/mcp"}
}

// roundRobin sends each request to the next replica.
type roundRobin struct {
	mu       sync.Mutex
	replicas []http.Handler
	next     int
}

func (b *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	h := b.replicas[b.next%len(b.replicas)]
	b.next++
	b.mu.Unlock()
	h.ServeHTTP(w, r)
}

// A session a client ended on one replica ends on the other, whose copy
// answers 404 once it hears, and no replica opens it again.
func TestEndSharedByReplicas(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	up := logServer(t)
	keys, err := open(t, url).Keys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 2 {
		g, err := gateway.New([]*config.Server{up}, &gateway.Options{Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: open(t, url)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		ts := httptest.NewServer(g)
		t.Cleanup(ts.Close)
		urls = append(urls, ts.URL)
	}
	do := func(method, url, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, url+"/mcp", bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	_, sess := do("POST", urls[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+
		protocol.LatestLegacyVersion+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for _, u := range urls {
		if code, _ := do("POST", u, sess, ping); code != http.StatusOK {
			t.Fatalf("ping before the end: %d", code)
		}
	}
	if code, _ := do("DELETE", urls[0], sess, ""); code/100 != 2 {
		t.Fatalf("DELETE: %d", code)
	}
	for code := 0; code != http.StatusNotFound; {
		if ctx.Err() != nil {
			t.Fatalf("the other replica still serves the ended session (%d)", code)
		}
		code, _ = do("POST", urls[1], sess, ping)
	}
	if code, _ := do("POST", urls[0], sess, ping); code != http.StatusNotFound {
		t.Errorf("the replica it ended on opened it again: %d", code)
	}
}
