package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// advertised starts n gateways that share a sealer, each with an
// isolated server a and advertising the URL it listens on, and returns
// them with their servers.
func advertised(t testing.TB, n int, auth func(http.Handler) http.Handler) ([]*Gateway, []*httptest.Server) {
	t.Helper()
	sealer, err := NewSealer(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable() // child's server, for benchmarks too
	if err != nil {
		t.Fatal(err)
	}
	up := &config.Server{Name: "a", Transport: config.Stdio, Command: exe, Env: map[string]string{"FERRY_GATEWAY_TEST_SERVER": "a"}}
	var gs []*Gateway
	var tss []*httptest.Server
	for range n {
		ts := httptest.NewUnstartedServer(nil)
		g, err := New([]*config.Server{up}, &Options{Isolate: []string{"*"}, Auth: auth,
			Replicas: &ReplicaOptions{Sealer: sealer, Advertise: "http://" + ts.Listener.Addr().String()}})
		if err != nil {
			t.Fatal(err)
		}
		ts.Config.Handler = g
		ts.Start()
		t.Cleanup(func() {
			ts.CloseClientConnections()
			ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := g.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		gs, tss = append(gs, g), append(tss, ts)
	}
	return gs, tss
}

// A session whose isolated server's process runs on one replica is
// served there whichever replica the balancer sends its requests to: the
// others forward them to the owner, so one process serves them all.
func TestIsolatedSessionForwardedToItsOwner(t *testing.T) {
	for _, tc := range []struct{ endpoint, tool string }{{"/mcp", "a__whoami"}, {"/servers/a/mcp", "whoami"}} {
		t.Run(tc.endpoint, func(t *testing.T) {
			gs, _ := advertised(t, 2, nil)
			b := &roundRobin{replicas: []http.Handler{gs[0], gs[1]}}
			ts := httptest.NewServer(b)
			t.Cleanup(ts.Close)
			c := connect(t, ts.URL+tc.endpoint, protocol.LatestLegacyVersion, nil)
			ctx := ctxT(t)
			first := text(t)(c.Call(ctx, tc.tool, nil))
			for i := range 6 {
				if got := text(t)(c.Call(ctx, tc.tool, nil)); got != first {
					t.Fatalf("call %d was served by %q, the session's first call by %q", i, got, first)
				}
			}
			if n := b.inits.Load(); n != 1 {
				t.Errorf("the client sent initialize %d times, want 1", n)
			}
			// The initialize went to gs[0], which owns the session.
			for i, want := range []int{1, 0} {
				if n := gs[i].children.count(); n != want {
					t.Errorf("replica %d runs %d session processes, want %d", i, n, want)
				}
			}
		})
	}
}

// The owner checks the caller of a forwarded request from the request's
// own credentials; a forwarded request is never forwarded again; an owner
// that is gone gets its sessions answered 404, saying so, and a new
// initialize opens a session that works.
func TestForwardedRequestAnswers(t *testing.T) {
	gs, tss := advertised(t, 2, BearerTokens([]string{"alice-token", "bob-token"}))
	owner, other := tss[0].URL, tss[1].URL
	code, sess, _ := postMCP(t, owner, "alice-token", "", nil, initializeBody)
	if code != http.StatusOK || sess == "" {
		t.Fatalf("initialize: %d, session %q", code, sess)
	}
	postMCP(t, owner, "alice-token", sess, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a__echo","arguments":{"message":"hi"}}}`
	hop := http.Header{forwardedHeader: {"1"}}
	cases := []struct {
		name, token string
		header      http.Header
		want        int
		body        string
	}{
		{"its caller", "alice-token", nil, http.StatusOK, `"hi"`},
		{"no credentials", "", nil, http.StatusUnauthorized, ""},
		{"another caller", "bob-token", nil, http.StatusNotFound, "session not found"},
		{"already forwarded", "alice-token", hop, http.StatusNotFound, "isolated"},
	}
	for _, tc := range cases {
		if code, _, body := postMCP(t, other, tc.token, sess, tc.header, call); code != tc.want || !strings.Contains(body, tc.body) {
			t.Errorf("%s: %d %s, want %d with %s", tc.name, code, body, tc.want, tc.body)
		}
	}
	if n := gs[1].children.count(); n != 0 {
		t.Errorf("the replica that forwards runs %d session processes", n)
	}

	tss[0].CloseClientConnections()
	tss[0].Close()
	if code, _, body := postMCP(t, other, "alice-token", sess, nil, call); code != http.StatusNotFound || !strings.Contains(body, "does not answer") {
		t.Errorf("with the owner gone: %d %s", code, body)
	}
	if code, sess, _ = postMCP(t, other, "alice-token", "", nil, initializeBody); code != http.StatusOK {
		t.Fatalf("a new initialize on the surviving replica: %d", code)
	}
	postMCP(t, other, "alice-token", sess, nil, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _, body := postMCP(t, other, "alice-token", sess, nil, call); code != http.StatusOK || !strings.Contains(body, `"hi"`) {
		t.Errorf("a new session on the surviving replica: %d %s", code, body)
	}
}

// Only a URL sealed with the replicas' key is forwarded to: an id sealed
// with another key that names an owner elsewhere reaches no one.
func TestForwardOnlyToSealedOwner(t *testing.T) {
	var reached atomic.Int32
	lure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(lure.Close)
	_, tss := advertised(t, 1, nil)
	forger, _ := NewSealer(NewKey())
	forged := forger.seal([]byte(`{"p":"/mcp","e":99999999999,"i":{},"o":"x","a":"` + lure.URL + `"}`))
	if code, _, _ := postMCP(t, tss[0].URL, "", forged, nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("a forged id answered %d, want 404", code)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("a forged id's URL was reached %d times", n)
	}
}

func TestCheckAdvertise(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"http://10.0.0.5:8000", true},
		{"https://replica-1.internal/", true},
		{"10.0.0.5:8000", false},
		{"ftp://10.0.0.5", false},
		{"http://", false},
		{"http://u:p@10.0.0.5", false},
		{"http://10.0.0.5/mcp", false},
		{"http://10.0.0.5?x=1", false},
	} {
		if err := checkAdvertise(tc.url); (err == nil) != tc.ok {
			t.Errorf("checkAdvertise(%q) = %v, want ok %v", tc.url, err, tc.ok)
		}
	}
	_, err := New(nil, &Options{Replicas: &ReplicaOptions{Sealer: must(NewSealer(NewKey())), Advertise: "10.0.0.5:8000"}})
	if err == nil || !strings.Contains(err.Error(), "advertised URL") {
		t.Errorf("New with a bad advertised URL: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// postMCP posts body to url's /mcp, as token's caller on session, and
// returns the status, the session id answered and the body.
func postMCP(t *testing.T, url, token, session string, header http.Header, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), "POST", url+"/mcp", strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25") // initializeBody's
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(got)
}

// deadlineRecorder is a ResponseWriter that keeps the write deadlines set
// on it, as net/http's connection would apply them.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// A forwarded answer moves the write deadline forward at each write, as
// the endpoints do for their streams: a forwarded stream is not cut by
// the server's WriteTimeout, which counts from the request's start.
func TestForwardedStreamMovesWriteDeadline(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	w := &deadlineWriter{ResponseWriter: rec, timeout: time.Minute}
	w.WriteHeader(http.StatusOK)
	for range 3 {
		w.Write([]byte("data: {}\n\n"))
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if len(rec.deadlines) != 4 {
		t.Fatalf("%d write deadlines were set, want one before the header and each write", len(rec.deadlines))
	}
	for i, d := range rec.deadlines {
		if left := time.Until(d); left < 50*time.Second || left > time.Minute {
			t.Errorf("deadline %d is %v away, want about the timeout", i, left)
		}
	}
	if !rec.Flushed {
		t.Error("the answer was not flushed through")
	}
}

// BenchmarkForwardedCall is a tools/call of an isolated session served on
// its owner directly, and through another replica that forwards it.
func BenchmarkForwardedCall(b *testing.B) {
	for _, bc := range []struct {
		name    string
		forward bool
	}{{"direct", false}, {"forwarded", true}} {
		b.Run(bc.name, func(b *testing.B) {
			gs, _ := advertised(b, 2, nil)
			// initialize opens the session on gs[0]; the rest of the
			// session goes to gs[1] when forwarded.
			split := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if bc.forward && r.Header.Get(sessionHeader) != "" {
					gs[1].ServeHTTP(w, r)
					return
				}
				gs[0].ServeHTTP(w, r)
			})
			ts := httptest.NewServer(split)
			defer ts.Close()
			ctx := context.Background()
			c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Call(ctx, "a__echo", map[string]any{"message": "hi"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
