package streamable_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// recorder serves MCP and keeps the headers of the requests it got.
type recorder struct {
	h       http.Handler
	mu      sync.Mutex
	headers []http.Header
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.mu.Unlock()
	rc.h.ServeHTTP(w, r)
}

func (rc *recorder) got() []http.Header {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.headers
}

// redirector answers every request with status, to target.
func redirector(t *testing.T, status int, target string) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, status)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// secrets are what the client's requests carry that must not reach
// another origin.
var secrets = http.Header{"Authorization": {"Bearer s3cret"}, "X-Api-Key": {"k3y"}}

// TestRedirects: the client follows a redirect within the endpoint's
// origin (a POST moved with 307), and refuses one to another origin (here
// another port of the same host) or one that would turn its POST into a
// GET, saying what happened, while the other server hears nothing. On
// a12c33f the other origin got the Authorization header, the custom one
// and the body, and the caller saw only an HTTP status or "invalid
// JSON".
func TestRedirects(t *testing.T) {
	other := &recorder{h: streamablehandler.New(testServer(), nil)}
	ots := httptest.NewServer(other)
	defer ots.Close()
	same := &recorder{h: streamablehandler.New(testServer(), nil)}
	mux := http.NewServeMux()
	mux.Handle("/mcp/", same)
	mux.Handle("/mcp", http.RedirectHandler("/mcp/", http.StatusTemporaryRedirect))
	sts := httptest.NewServer(mux)
	defer sts.Close()

	for _, lean := range []bool{true, false} {
		var hc *http.Client // nil: the lean HTTP/1.1 client makes the POSTs
		if !lean {
			hc = &http.Client{}
		}
		tests := []struct {
			name, url string
			version   string
			want      string // "" when the call works
		}{
			{"307 within the origin, legacy", sts.URL + "/mcp", protocol.Version20251125, ""},
			{"307 within the origin, stateless", sts.URL + "/mcp", protocol.Version20260728, ""},
			{"307 to another port", redirector(t, http.StatusTemporaryRedirect, ots.URL+"/mcp").URL, protocol.Version20251125, "another origin"},
			{"308 to another port, stateless", redirector(t, http.StatusPermanentRedirect, ots.URL+"/mcp").URL, protocol.Version20260728, "another origin"},
			{"302 within the origin", redirector(t, http.StatusFound, "/elsewhere").URL, protocol.Version20251125, "POST"},
		}
		for _, tt := range tests {
			tr := &streamable.Transport{URL: tt.url, Client: hc, Header: secrets.Clone(), DisableSSEFallback: true}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c, err := client.Connect(ctx, tr, &client.Options{ProtocolVersion: tt.version})
			if err == nil {
				_, err = c.Call(ctx, "echo", map[string]any{"message": "hi"})
				c.Close()
			}
			cancel()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("lean %v, %s: %v", lean, tt.name, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("lean %v, %s: error %v, want one about %q", lean, tt.name, err, tt.want)
			case tt.want != "":
				t.Logf("lean %v, %s: %v", lean, tt.name, err)
			}
		}
	}
	if n := len(other.got()); n != 0 {
		t.Errorf("the other origin got %d requests, the first with headers %v", n, other.got()[0])
	}
	if len(same.got()) == 0 {
		t.Error("the redirect within the origin was not followed")
	}
	for _, h := range same.got() {
		if h.Get("Authorization") != "Bearer s3cret" || h.Get("X-Api-Key") != "k3y" {
			t.Fatalf("a redirect within the origin lost the headers: %v", h)
		}
	}
}

// TestRedirectsAcrossOrigins: a client that chose to follow redirects
// across origins reaches the other server without the Transport's
// headers and Authorization, and without the session id of another
// origin: a server that moved (initialize redirected too) gets its own
// session id; one that gets the calls of a session opened elsewhere does
// not get that session's id.
func TestRedirectsAcrossOrigins(t *testing.T) {
	other := &recorder{h: streamablehandler.New(testServer(), nil)}
	ots := httptest.NewServer(other)
	defer ots.Close()
	// first opens sessions, then sends the calls elsewhere.
	firstMCP := streamablehandler.New(testServer(), nil)
	var firstSessions []string
	var mu sync.Mutex
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), `"tools/call"`) {
				http.Redirect(w, r, ots.URL+"/mcp", http.StatusTemporaryRedirect)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		rec := httptest.NewRecorder()
		firstMCP.ServeHTTP(rec, r)
		if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" {
			mu.Lock()
			firstSessions = append(firstSessions, sid)
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer first.Close()

	for _, lean := range []bool{true, false} {
		var hc *http.Client
		if !lean {
			hc = &http.Client{}
		}
		moved := redirector(t, http.StatusPermanentRedirect, ots.URL+"/mcp")
		tr := &streamable.Transport{Client: hc, Header: secrets.Clone(), FollowRedirectsAcrossOrigins: true, DisableGETStream: true}
		c := connectHTTP(t, moved.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, tr)
		if res, err := c.Call(context.Background(), "echo", map[string]any{"message": "hi"}); err != nil || res.Content[0].Text != "hi" {
			t.Fatalf("lean %v: call to a server that moved: %v", lean, err)
		}
		c.Close()

		tr = &streamable.Transport{Client: hc, Header: secrets.Clone(), FollowRedirectsAcrossOrigins: true, DisableGETStream: true}
		c = connectHTTP(t, first.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, tr)
		_, err := c.Call(context.Background(), "echo", map[string]any{"message": "hi"})
		t.Logf("lean %v: a call of a session opened elsewhere, redirected: %v", lean, err)
		c.Close()
	}
	if len(other.got()) == 0 || len(firstSessions) == 0 {
		t.Fatal("the redirects were not followed")
	}
	for _, h := range other.got() {
		for _, k := range []string{"Authorization", "X-Api-Key", "Cookie"} {
			if v := h.Get(k); v != "" {
				t.Errorf("%s reached the other origin: %q", k, v)
			}
		}
		if slices.Contains(firstSessions, h.Get("Mcp-Session-Id")) {
			t.Errorf("the session id of another origin reached the other origin: %q", h.Get("Mcp-Session-Id"))
		}
	}
}
