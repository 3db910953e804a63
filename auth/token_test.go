package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
)

// handlerTransport answers requests with a handler, in the caller's
// goroutine: no network, so that a synctest bubble's clock is the only
// one.
type handlerTransport struct{ h http.Handler }

func (ht handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	in := r.Clone(r.Context())
	if in.Body == nil {
		in.Body = http.NoBody // as a server's request always has one
	}
	ht.h.ServeHTTP(rec, in)
	return rec.Result(), nil
}

// TestShortLivedTokenUsed: a token that lives less than the refresh
// leeway (30 s) is used for the first three quarters of its life, not
// refreshed before every request.
func TestShortLivedTokenUsed(t *testing.T) {
	as := newTestAS(t)
	as.ttl = 10 * time.Second
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		rt := handlerTransport{as.srv.Config.Handler}
		a := &Authorizer{Server: as.mcpURL(), Store: &FileStore{Dir: dir}, Grant: &AuthorizationCode{Authorize: headlessVia(rt)}, HTTPClient: &http.Client{Transport: rt}}
		hc := &http.Client{Transport: a.RoundTripper(rt)}
		start := time.Now()
		for _, step := range []struct {
			at           time.Duration // since the token was issued
			tokenRequest int           // the token requests made by then
		}{
			{0, 1}, // the authorization
			{time.Second, 1},
			{7 * time.Second, 1},
			{8 * time.Second, 2}, // within a quarter of its life of its expiry: refreshed
			{9 * time.Second, 2},
		} {
			time.Sleep(time.Until(start.Add(step.at)))
			req, _ := http.NewRequest(http.MethodGet, as.mcpURL(), nil)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			as.mu.Lock()
			n := as.tokenRequests
			as.mu.Unlock()
			if resp.StatusCode != http.StatusOK || n != step.tokenRequest {
				t.Fatalf("at %v: status %d after %d token requests, want 200 after %d", step.at, resp.StatusCode, n, step.tokenRequest)
			}
		}
	})
}

// TestRefreshWithMemoryStore: the default store, in memory, refreshes a
// token of a dynamically registered client. The refresh looked the
// client up in the store while the store's Update held its lock, which
// is not reentrant: the request never returned.
func TestRefreshWithMemoryStore(t *testing.T) {
	as := newTestAS(t)
	a := newAuthorizer(as, nil)
	if _, err := a.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	expire(t, a.store(), as.mcpURL())
	a.setToken(nil)
	a.mu.Lock()
	a.loaded = false // read the expired token from the store again
	a.mu.Unlock()
	done := make(chan int, 1)
	go func() {
		code := 0
		if resp, err := (&http.Client{Transport: a.RoundTripper(nil)}).Get(as.mcpURL()); err == nil {
			resp.Body.Close()
			code = resp.StatusCode
		}
		done <- code
	}()
	select {
	case code := <-done:
		as.mu.Lock()
		n := as.refreshes
		as.mu.Unlock()
		if code != http.StatusOK || n != 1 {
			t.Fatalf("status %d after %d refreshes, want 200 after 1", code, n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the refresh did not return: the memory store's lock was taken twice")
	}
}
