package resourceserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-json-experiment/json"
)

// jwksServer serves is's keys at its URL, counting the fetches, and
// failing them (500) while failing is set.
type jwksServer struct {
	*httptest.Server
	fetches atomic.Int32
	failing atomic.Bool
}

func newJWKSServer(t *testing.T, is *issuer, hold func(n int32, r *http.Request)) *jwksServer {
	js := &jwksServer{}
	js.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := js.fetches.Add(1)
		if hold != nil {
			hold(n, r)
		}
		if js.failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		b, _ := json.Marshal(is.jwks)
		w.Write(b)
	}))
	t.Cleanup(js.Close)
	return js
}

// noKeepAlive is a client whose connections end with their request, so
// that none outlives a synctest bubble.
func noKeepAlive() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// TestJWKSFetchesBounded: tokens, however many and however concurrent,
// fetch the keys at most once per interval, before any key is known as
// after (at most every 5 s after a failed fetch, every MinRefresh for a
// key not seen yet).
func TestJWKSFetchesBounded(t *testing.T) {
	is := newIssuer(t)
	js := newJWKSServer(t, is, nil)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const resource = "https://rs.example.com/mcp"
	synctest.Test(t, func(t *testing.T) {
		v := &JWT{Issuer: is.srv.URL, JWKSURL: js.URL, MinRefresh: time.Minute, HTTPClient: noKeepAlive()}
		ctx := context.Background()
		verify := func(token string) error { _, err := v.Verify(ctx, token, resource); return err }
		concurrently := func(tokens []string) []error {
			errs := make([]error, len(tokens))
			var wg sync.WaitGroup
			for i, tok := range tokens {
				wg.Go(func() { errs[i] = verify(tok) })
			}
			wg.Wait()
			return errs
		}
		tokens := func(n int, key *ecdsa.PrivateKey, kid string) []string {
			out := make([]string, n)
			for i := range out {
				c := is.claims(resource)
				c["jti"] = fmt.Sprint(kid, i)
				out[i] = is.token(t, key, kid, c)
			}
			return out
		}
		want := func(step string, n int32) {
			t.Helper()
			if got := js.fetches.Load(); got != n {
				t.Fatalf("%s: %d fetches of the keys, want %d", step, got, n)
			}
		}

		js.failing.Store(true)
		for _, tok := range tokens(200, is.key, "k1") {
			if err := verify(tok); err == nil || isInvalid(err) {
				t.Fatalf("with the keys unreachable: %v, want a server error (503)", err)
			}
		}
		want("200 tokens while the keys cannot be fetched", 1)
		concurrently(tokens(50, is.key, "k1"))
		want("50 more at once", 1)

		time.Sleep(5 * time.Second) // retryAfterFailure
		js.failing.Store(false)
		for i, err := range concurrently(tokens(50, is.key, "k1")) {
			if err != nil {
				t.Fatalf("token %d once the keys are back: %v", i, err)
			}
		}
		want("50 tokens at once, 5 s after the failure", 2)

		for i, err := range concurrently(tokens(50, other, "k9")) {
			if !isInvalid(err) {
				t.Fatalf("token %d of an unknown key: %v, want invalid", i, err)
			}
		}
		want("50 tokens of an unknown key right after a fetch", 2)
		time.Sleep(time.Minute)
		concurrently(tokens(50, other, "k9"))
		want("50 tokens of an unknown key a minute later", 3)
	})
}

// TestJWKSFetchOutsideTheLock: while the keys are fetched again (for a
// token naming a key not seen yet), a token signed with a known key is
// verified without waiting for the fetch.
func TestJWKSFetchOutsideTheLock(t *testing.T) {
	is := newIssuer(t)
	const resource = "https://rs.example.com/mcp"
	refetching := make(chan struct{})
	validDone := make(chan struct{})
	js := newJWKSServer(t, is, func(n int32, r *http.Request) {
		if n != 2 {
			return
		}
		close(refetching)
		select {
		case <-validDone:
		case <-r.Context().Done(): // the client gave up
		}
	})
	// The timeout only ends the deadlock of a fetch that holds the lock;
	// without it, the fetch ends when the valid token is verified.
	v := &JWT{Issuer: is.srv.URL, JWKSURL: js.URL, MinRefresh: time.Nanosecond, HTTPClient: &http.Client{Timeout: 2 * time.Second}}
	ctx := context.Background()
	warm := is.claims(resource)
	warm["jti"] = "warm"
	if _, err := v.Verify(ctx, is.token(t, is.key, "k1", warm), resource); err != nil {
		t.Fatal(err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	unknown := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, is.token(t, other, "k2", is.claims(resource)), resource)
		unknown <- err
	}()
	<-refetching
	_, err := v.Verify(ctx, is.token(t, is.key, "k1", is.claims(resource)), resource)
	close(validDone)
	if err != nil {
		t.Errorf("a token of a known key during a fetch: %v", err)
	}
	err = <-unknown
	var timeout net.Error
	switch {
	case errors.As(err, &timeout):
		// The fetch can only have failed by the client's timeout: it
		// held the verifier's lock, so the valid token waited for it,
		// and it waited for the valid token.
		t.Errorf("a token of a known key waited for the fetch of the keys: %v", err)
	case !isInvalid(err):
		t.Errorf("a token of an unknown key: %v, want invalid", err)
	}
}

// introspectionServer answers introspections, counting them: active for
// the token "good" with audience aud, inactive for the others, and 500
// to all while failing is set.
type introspectionServer struct {
	*httptest.Server
	requests atomic.Int32
	failing  atomic.Bool
}

func newIntrospectionServer(t *testing.T, aud string) *introspectionServer {
	is := &introspectionServer{}
	is.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.requests.Add(1)
		if is.failing.Load() {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		r.ParseForm()
		if r.Form.Get("token") != "good" {
			json.MarshalWrite(w, map[string]any{"active": false})
			return
		}
		json.MarshalWrite(w, map[string]any{"active": true, "sub": "erin", "scope": "files:read", "aud": aud})
	}))
	t.Cleanup(is.Close)
	return is
}

// TestIntrospectionKeepsTheAudience: a token introspected for one
// resource is not accepted by another that shares the verifier, before
// or after the first has cached it.
func TestIntrospectionKeepsTheAudience(t *testing.T) {
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	as := newIntrospectionServer(t, srv.URL+"/a")
	v := &Introspection{Endpoint: as.URL}
	for _, path := range []string{"/a", "/b"} {
		cfg := &Config{Resource: srv.URL + path, AuthorizationServers: []string{as.URL}, Verifier: v}
		cfg.Mount(mux, path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	}
	tests := []struct {
		path     string
		status   int
		requests int32
	}{
		{"/a", 200, 1},
		{"/b", 401, 2},
		{"/b", 401, 2}, // refused from the cache
		{"/a", 200, 2}, // accepted from the cache
	}
	for i, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+tt.path, nil)
		req.Header.Set("Authorization", "Bearer good")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%d: %s answered %d, want %d (%s)", i, tt.path, resp.StatusCode, tt.status, resp.Header.Get("WWW-Authenticate"))
		}
		if n := as.requests.Load(); n != tt.requests {
			t.Errorf("%d: %d introspections, want %d", i, n, tt.requests)
		}
	}
}

// TestIntrospectionBounded: with the endpoint failing, 300 tokens at
// once make at most MaxConcurrent (8) requests of it, and it is not asked
// again until a backoff (1 s, then 2 s) has passed; refusals are kept 5 s.
func TestIntrospectionBounded(t *testing.T) {
	as := newIntrospectionServer(t, "https://rs/mcp")
	synctest.Test(t, func(t *testing.T) {
		v := &Introspection{Endpoint: as.URL, HTTPClient: noKeepAlive()}
		ctx := context.Background()
		verify := func(token string) error { _, err := v.Verify(ctx, token, "https://rs/mcp"); return err }
		want := func(step string, n int32) {
			t.Helper()
			if got := as.requests.Load(); got != n {
				t.Fatalf("%s: %d introspections, want %d", step, got, n)
			}
		}

		as.failing.Store(true)
		errs := make([]error, 300)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { errs[i] = verify(fmt.Sprint("random-", i)) })
		}
		wg.Wait()
		for i, err := range errs {
			if err == nil || isInvalid(err) {
				t.Fatalf("token %d with the endpoint failing: %v, want a server error (503)", i, err)
			}
		}
		if n := as.requests.Load(); n < 1 || n > 8 {
			t.Fatalf("300 tokens at once with the endpoint failing: %d introspections, want 1 to 8", n)
		}
		n := as.requests.Load()
		verify("another")
		want("right after the failures", n)
		time.Sleep(time.Second)
		verify("another")
		want("1 s later", n+1)
		time.Sleep(time.Second)
		verify("another")
		want("1 s after the second failure", n+1)
		time.Sleep(time.Second)
		as.failing.Store(false)
		if err := verify("good"); err != nil {
			t.Fatalf("once the endpoint is back: %v", err)
		}
		want("2 s after the second failure", n+2)
		for range 2 {
			if err := verify("forged"); !isInvalid(err) {
				t.Fatalf("forged: %v, want invalid", err)
			}
		}
		want("a refused token twice", n+3)
		time.Sleep(5 * time.Second) // refusedTTL
		verify("forged")
		want("a refused token 5 s later", n+4)
	})
}
