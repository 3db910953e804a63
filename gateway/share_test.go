package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// roundRobin is a balancer with no affinity: each request goes to the
// next live replica. It counts the initialize requests clients send.
type roundRobin struct {
	mu       sync.Mutex
	replicas []http.Handler
	next     int
	inits    atomic.Int32
}

func (b *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"method":"initialize"`)) {
		b.inits.Add(1)
	}
	b.mu.Lock()
	h := b.replicas[b.next%len(b.replicas)]
	b.next++
	b.mu.Unlock()
	h.ServeHTTP(w, r)
}

func (b *roundRobin) drop(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.replicas = append(b.replicas[:i:i], b.replicas[i+1:]...)
}

// replicas starts n gateways for servers that share one sealer, behind a
// round-robin balancer.
func replicas(t *testing.T, n int, servers func() []*config.Server, opts func() *Options) (*roundRobin, []*Gateway, string) {
	t.Helper()
	sealer, err := NewSealer(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	b := &roundRobin{}
	var gs []*Gateway
	for range n {
		o := &Options{}
		if opts != nil {
			o = opts()
		}
		o.Replicas = &ReplicaOptions{Sealer: sealer}
		g, _ := start(t, servers(), o)
		gs = append(gs, g)
		b.replicas = append(b.replicas, g)
	}
	ts := httptest.NewServer(b)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return b, gs, ts.URL
}

// A legacy session opened on one replica is served by every replica,
// with no affinity, and goes on through the other once one is gone,
// with no new initialize.
func TestSessionServedByEveryReplica(t *testing.T) {
	up, _ := remote(t, "r", false)
	for _, endpoint := range []string{"/mcp", "/servers/r/mcp"} {
		t.Run(endpoint, func(t *testing.T) {
			b, gs, url := replicas(t, 2, func() []*config.Server { return []*config.Server{up} }, nil)
			tool := "echo"
			if endpoint == "/mcp" {
				tool = "r__echo"
			}
			c := connect(t, url+endpoint, protocol.LatestLegacyVersion, nil)
			ctx := ctxT(t)
			for i := range 6 {
				if got := text(t)(c.Call(ctx, tool, map[string]any{"message": "hi"})); got != "hi" {
					t.Fatalf("call %d: %q", i, got)
				}
			}
			b.drop(0)
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := gs[0].Close(cctx); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				if got := text(t)(c.Call(ctx, tool, map[string]any{"message": "on"})); got != "on" {
					t.Fatalf("call %d after the replica went: %q", i, got)
				}
			}
			if n := b.inits.Load(); n != 1 {
				t.Errorf("the client sent initialize %d times, want 1", n)
			}
		})
	}
}

// A session id no replica sealed, sealed for another endpoint or caller,
// or expired, is not served.
func TestSealedIDRefused(t *testing.T) {
	up, _ := remote(t, "r", false)
	sealer, err := NewSealer(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSealer(NewKey())
	_, url := start(t, []*config.Server{up}, &Options{Replicas: &ReplicaOptions{Sealer: sealer},
		Auth: BearerTokens([]string{"alice-token", "bob-token"})})
	post := func(endpoint, token, session, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", url+endpoint, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
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
		defer resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
	}
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` +
		protocol.LatestLegacyVersion + `","capabilities":{},"clientInfo":{"name":"alice","version":"1"}}}`
	code, sess := post("/mcp", "alice-token", "", initialize)
	if code != 200 || sess == "" {
		t.Fatalf("initialize: %d, session %q", code, sess)
	}
	cases := []struct {
		name, endpoint, token, session string
		want                           int
	}{
		{"its own", "/mcp", "alice-token", sess, 200},
		{"another caller", "/mcp", "bob-token", sess, 404},
		{"another endpoint", "/servers/r/mcp", "alice-token", sess, 404},
		{"another key", "/mcp", "alice-token", other.seal([]byte(`{"p":"/mcp","e":99999999999,"i":{}}`)), 404},
		{"not sealed", "/mcp", "alice-token", "abc", 404},
		{"expired", "/mcp", "alice-token", sealer.seal([]byte(`{"p":"/mcp","e":1,"i":{}}`)), 404},
	}
	for _, tc := range cases {
		if code, got := post(tc.endpoint, tc.token, tc.session, ping); code != tc.want || code == 200 && got != sess {
			t.Errorf("%s: %d (session %q), want %d", tc.name, code, got, tc.want)
		}
	}
}

// A session of an endpoint that reaches an isolated server's process is
// served only by the replica that runs it: another answers 404, saying
// why, so that the client initializes again rather than lose the
// process's state unawares.
func TestIsolatedSessionPinnedToItsReplica(t *testing.T) {
	sealer, err := NewSealer(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for range 2 {
		_, url := start(t, []*config.Server{child(t, "a")}, &Options{Isolate: []string{"*"}, Replicas: &ReplicaOptions{Sealer: sealer}})
		urls = append(urls, url)
	}
	ctx := ctxT(t)
	post := func(url, session, body string) (int, string, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", url+"/mcp", strings.NewReader(body))
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
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(got)
	}
	_, sess, _ := post(urls[0], "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+
		protocol.LatestLegacyVersion+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	post(urls[0], sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _, body := post(urls[0], sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a__echo","arguments":{"message":"hi"}}}`); code != 200 || !strings.Contains(body, "hi") {
		t.Fatalf("a call on the session's own replica: %d %s", code, body)
	}
	if code, _, body := post(urls[1], sess, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); code != http.StatusNotFound || !strings.Contains(body, "isolated") {
		t.Errorf("the other replica answered %d: %s", code, body)
	}
}

// A rotated key still opens the ids it sealed while it is kept as a
// previous key, and no longer once it is dropped.
func TestSealerRotation(t *testing.T) {
	k1, k2 := NewKey(), NewKey()
	s, err := NewSealer(k1)
	if err != nil {
		t.Fatal(err)
	}
	old := s.seal([]byte("old"))
	cases := []struct {
		name  string
		keys  [][]byte
		opens bool
	}{
		{"current", [][]byte{k1}, true},
		{"previous", [][]byte{k2, k1}, true},
		{"dropped", [][]byte{k2}, false},
	}
	for _, tc := range cases {
		if err := s.SetKeys(tc.keys...); err != nil {
			t.Fatal(err)
		}
		got, err := s.open(old)
		if opens := err == nil && string(got) == "old"; opens != tc.opens {
			t.Errorf("%s: opens %v (%q, %v), want %v", tc.name, opens, got, err, tc.opens)
		}
		if got, err := s.open(s.seal([]byte("new"))); err != nil || string(got) != "new" {
			t.Errorf("%s: a new id: %q, %v", tc.name, got, err)
		}
	}
	if err := s.SetKeys([]byte("short")); err == nil || strings.Contains(err.Error(), "short") {
		t.Errorf("a short key: %v", err)
	}
	if _, err := ReadKeys(strings.NewReader("# keys\n" + strings.Repeat("ab", 32) + "\nzz\n")); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a bad key line: %v", err)
	}
}

// BenchmarkSealedSessionCall is what sealed ids cost a legacy call of a
// session the replica already serves: a map lookup and the resealing of
// the answer's header.
func BenchmarkSealedSessionCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	up := &config.Server{Name: "r", Transport: config.Stdio, Command: exe, Env: map[string]string{"FERRY_GATEWAY_TEST_SERVER": "r"}}
	sealer, _ := NewSealer(NewKey())
	for _, bc := range []struct {
		name     string
		replicas *ReplicaOptions
	}{{"plain", nil}, {"sealed", &ReplicaOptions{Sealer: sealer}}} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := New([]*config.Server{up}, &Options{Replicas: bc.replicas})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close(context.Background())
			ts := httptest.NewServer(g)
			defer ts.Close()
			ctx := context.Background()
			if err := g.Ready(ctx); err != nil {
				b.Fatal(err)
			}
			c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(ctx, "r__echo", map[string]any{"message": "hi"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
