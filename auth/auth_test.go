package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/auth/metadata"
)

// get makes a request through the Authorizer's RoundTripper, the
// server asking for the scopes need.
func get(t *testing.T, a *Authorizer, target, need, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
	if need != "" {
		req.Header.Set("X-Need-Scope", need)
	}
	resp, err := (&http.Client{Transport: a.RoundTripper(nil)}).Do(req)
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func newAuthorizer(as *testAS, store Store) *Authorizer {
	return &Authorizer{Server: as.mcpURL(), Store: store, Grant: &AuthorizationCode{Authorize: headless(as.t)}}
}

func TestAuthorizationCodeThenReuse(t *testing.T) {
	as := newTestAS(t)
	a := newAuthorizer(as, nil)
	// The refused request is authorized and sent again, its body intact.
	if code, body := get(t, a, as.mcpURL(), "", "first"); code != 200 || body != "ok first" {
		t.Fatalf("got %d %q", code, body)
	}
	if code, body := get(t, a, as.mcpURL(), "", "second"); code != 200 || body != "ok second" {
		t.Fatalf("got %d %q", code, body)
	}
	if as.authorizations != 1 || as.registrations != 1 {
		t.Fatalf("%d authorizations, %d registrations; want 1 and 1", as.authorizations, as.registrations)
	}
	// The challenge's scope, with offline_access (the AS offers it).
	if want := []string{"read offline_access"}; !reflect.DeepEqual(as.scopes, want) {
		t.Errorf("scopes asked %q, want %q", as.scopes, want)
	}
	if as.resources[0] != as.mcpURL() {
		t.Errorf("resource %q, want %q", as.resources[0], as.mcpURL())
	}
	// Another origin never sees the token.
	other := newTestAS(t)
	if code, _ := get(t, a, other.mcpURL(), "", ""); code != 401 {
		t.Errorf("another origin answered %d, want its own 401", code)
	}
}

func TestStepUpUnionAndLimit(t *testing.T) {
	as := newTestAS(t)
	a := newAuthorizer(as, nil)
	if code, _ := get(t, a, as.mcpURL(), "", ""); code != 200 {
		t.Fatalf("got %d", code)
	}
	// 403 insufficient_scope: re-authorized with what was asked before
	// and what the challenge asks.
	if code, _ := get(t, a, as.mcpURL(), "write", ""); code != 200 {
		t.Fatalf("step-up: got %d", code)
	}
	if got := as.scopes[1]; got != "read offline_access write" {
		t.Errorf("step-up asked %q, want the union %q", got, "read offline_access write")
	}
	// A scope the AS never grants: the server keeps refusing; the
	// client gives up after MaxAuthorizations at most, here after one
	// since the new token did not gain it (no progress).
	before := as.authorizations
	as.mu.Lock()
	as.meta.ScopesSupported = []string{"read", "write"}
	as.mu.Unlock()
	code, _ := get(t, a, as.mcpURL(), "never", "")
	if code != 403 {
		t.Fatalf("got %d, want the last 403", code)
	}
	if n := as.authorizations - before; n < 1 || n > 3 {
		t.Errorf("%d authorizations for a scope never granted, want 1 to 3", n)
	}
}

func TestNoGrantReturnsRefusal(t *testing.T) {
	as := newTestAS(t)
	a := &Authorizer{Server: as.mcpURL()}
	if code, _ := get(t, a, as.mcpURL(), "", ""); code != 401 {
		t.Fatalf("got %d, want the 401 itself", code)
	}
	if as.authorizations != 0 {
		t.Fatal("an Authorizer without a Grant authorized")
	}
	if _, err := a.Login(context.Background()); !errors.Is(err, ErrNoGrant) {
		t.Fatalf("Login: %v, want ErrNoGrant", err)
	}
	// A refusal naming metadata that cannot be fetched is still the
	// refusal, not a network error.
	bogus := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"`)
		w.WriteHeader(401)
	}))
	defer bogus.Close()
	if code, _ := get(t, &Authorizer{Server: bogus.URL}, bogus.URL, "", ""); code != 401 {
		t.Fatalf("got %d, want the 401", code)
	}
}

// expire makes the stored token expired, as time would.
func expire(t *testing.T, s Store, server string) {
	t.Helper()
	err := s.Update(context.Background(), server, func(r *Record) (*Record, error) {
		r.Token.Expiry = time.Now().Add(-time.Minute)
		return r, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRefreshSendsResourceAndRotates(t *testing.T) {
	as := newTestAS(t)
	store := &FileStore{Dir: t.TempDir()}
	a := newAuthorizer(as, store)
	if _, err := a.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	rec, _ := store.Load(context.Background(), as.mcpURL())
	old := rec.Token
	expire(t, store, as.mcpURL())
	// A new process: it reads the stored, expired token and refreshes.
	b := newAuthorizer(as, store)
	b.Grant = nil // refreshing needs no grant
	if code, _ := get(t, b, as.mcpURL(), "", ""); code != 200 {
		t.Fatalf("after refresh: %d", code)
	}
	if as.refreshes != 1 || as.authorizations != 1 {
		t.Fatalf("%d refreshes, %d authorizations; want 1 and 1", as.refreshes, as.authorizations)
	}
	if last := as.resources[len(as.resources)-1]; last != as.mcpURL() {
		t.Errorf("the refresh sent resource %q, want %q", last, as.mcpURL())
	}
	rec, _ = store.Load(context.Background(), as.mcpURL())
	if rec.Token.RefreshToken == old.RefreshToken || rec.Token.AccessToken == old.AccessToken {
		t.Error("the rotated tokens were not stored")
	}
}

// TestRefreshAcrossProcesses has several Authorizers, as in several
// processes, share a FileStore with one expired token and a rotating
// refresh token whose reuse revokes everything: each makes requests at
// once. The refresh token is spent once, and every request succeeds.
func TestRefreshAcrossProcesses(t *testing.T) {
	as := newTestAS(t)
	store := &FileStore{Dir: t.TempDir()}
	if _, err := newAuthorizer(as, store).Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	expire(t, store, as.mcpURL())
	const procs, requests = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, procs*requests)
	for range procs {
		// A FileStore of its own: only the directory is shared.
		a := &Authorizer{Server: as.mcpURL(), Store: &FileStore{Dir: store.Dir}}
		for range requests {
			wg.Go(func() {
				req, _ := http.NewRequest("GET", as.mcpURL(), nil)
				resp, err := (&http.Client{Transport: a.RoundTripper(nil)}).Do(req)
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					errs <- fmt.Errorf("status %d", resp.StatusCode)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if as.refreshes != 1 {
		t.Errorf("%d refreshes, want 1", as.refreshes)
	}
	if len(as.revoked) != 0 {
		t.Error("a refresh token was reused: the family was revoked")
	}
}

// TestChangedTokenNotWiped: a process whose token is stale finds, under
// the lock, that another process refreshed it; it uses that one and
// neither spends a refresh token nor forgets the token.
func TestChangedTokenNotWiped(t *testing.T) {
	as := newTestAS(t)
	store := &FileStore{Dir: t.TempDir()}
	a := newAuthorizer(as, store)
	if _, err := a.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	stale, _ := a.Token(context.Background())
	stale = &Token{AccessToken: stale.AccessToken, RefreshToken: stale.RefreshToken, Issuer: stale.Issuer, Resource: stale.Resource, ClientID: stale.ClientID, Expiry: time.Now().Add(-time.Minute)}
	// Another process refreshes.
	expire(t, store, as.mcpURL())
	b := &Authorizer{Server: as.mcpURL(), Store: store}
	fresh, err := b.Token(context.Background())
	if err != nil || fresh == nil || as.refreshes != 1 {
		t.Fatalf("the other process: %v, %v, %d refreshes", fresh, err, as.refreshes)
	}
	// This one still holds the spent refresh token in memory.
	got, err := a.refresh(context.Background(), stale)
	if err != nil || got == nil || got.AccessToken != fresh.AccessToken {
		t.Fatalf("refresh of a stale token: %v, %v; want the other's %v", got, err, fresh)
	}
	if as.refreshes != 1 || len(as.revoked) != 0 {
		t.Fatalf("%d refreshes, revoked %v: the spent token was sent", as.refreshes, as.revoked)
	}
	// A refresh token the AS refuses is forgotten with its token, but
	// the registration stays.
	as.mu.Lock()
	for f := range as.family + 1 {
		as.revoked[f] = true
	}
	as.mu.Unlock()
	expire(t, store, as.mcpURL())
	got, err = b.refresh(context.Background(), fresh)
	if err != nil || got != nil {
		t.Fatalf("refused refresh: %v, %v", got, err)
	}
	rec, _ := store.Load(context.Background(), as.mcpURL())
	if rec == nil || rec.Token != nil || len(rec.Clients) != 1 {
		t.Fatalf("after a refused refresh the record is %+v", rec)
	}
}

func TestCheckResponse(t *testing.T) {
	const issuer = "https://as.example.com"
	tests := []struct {
		name       string
		advertised bool
		q          url.Values
		want       error
	}{
		{"advertised, present, equal", true, url.Values{"iss": {issuer}, "code": {"c"}, "state": {"s"}}, nil},
		{"advertised, absent", true, url.Values{"code": {"c"}, "state": {"s"}}, ErrIssuerMismatch},
		{"not advertised, present, equal", false, url.Values{"iss": {issuer}, "code": {"c"}, "state": {"s"}}, nil},
		{"not advertised, present, other", false, url.Values{"iss": {"https://evil.example.com"}, "code": {"c"}, "state": {"s"}}, ErrIssuerMismatch},
		{"not advertised, absent", false, url.Values{"code": {"c"}, "state": {"s"}}, nil},
		{"trailing slash is another issuer", true, url.Values{"iss": {issuer + "/"}, "code": {"c"}, "state": {"s"}}, ErrIssuerMismatch},
		{"upper case is another issuer", true, url.Values{"iss": {"https://AS.example.com"}, "code": {"c"}, "state": {"s"}}, ErrIssuerMismatch},
		{"wrong state first", true, url.Values{"iss": {"https://evil"}, "code": {"c"}, "state": {"x"}}, ErrStateMismatch},
		{"error from the right server", true, url.Values{"iss": {issuer}, "error": {"access_denied"}, "state": {"s"}}, &TokenError{}},
		{"error from another server is not believed", true, url.Values{"iss": {"https://evil"}, "error": {"access_denied"}, "state": {"s"}}, ErrIssuerMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &discovery{issuer: issuer, as: &metadata.AuthorizationServer{Issuer: issuer, AuthorizationResponseIssParameterSupported: tt.advertised}}
			code, err := checkResponse(tt.q, "s", d)
			switch want := tt.want.(type) {
			case nil:
				if err != nil || code != "c" {
					t.Fatalf("got %q, %v", code, err)
				}
			case *TokenError:
				var te *TokenError
				if !errors.As(err, &te) || te.Code != "access_denied" {
					t.Fatalf("got %v, want access_denied", err)
				}
			default:
				if !errors.Is(err, want) {
					t.Fatalf("got %v, want %v", err, want)
				}
				if strings.Contains(fmt.Sprint(err), "access_denied") {
					t.Fatal("an unverified error was shown")
				}
			}
		})
	}
}

func TestScopesFor(t *testing.T) {
	withOffline := &metadata.AuthorizationServer{ScopesSupported: []string{"a", "offline_access"}}
	without := &metadata.AuthorizationServer{ScopesSupported: []string{"a", "b"}}
	prm := &metadata.ProtectedResource{ScopesSupported: []string{"p1", "p2"}}
	tests := []struct {
		name        string
		configured  []string
		as          *metadata.AuthorizationServer
		prm         *metadata.ProtectedResource
		want        []string
		sent        *Token
		refreshable bool
		expect      []string
	}{
		{"challenge first", nil, without, prm, []string{"c"}, nil, true, []string{"c"}},
		{"then scopes_supported", nil, without, prm, nil, nil, true, []string{"p1", "p2"}},
		{"else none", nil, without, &metadata.ProtectedResource{}, nil, nil, true, nil},
		{"configured, no challenge", []string{"x"}, without, prm, nil, nil, true, []string{"x"}},
		{"configured with challenge", []string{"x"}, without, prm, []string{"c"}, nil, true, []string{"x", "c"}},
		{"union with what was asked before", nil, without, prm, []string{"w"}, &Token{Issuer: "i", Scopes: []string{"r"}}, true, []string{"r", "w"}},
		{"not with another issuer's", nil, without, prm, []string{"w"}, &Token{Issuer: "other", Scopes: []string{"r"}}, true, []string{"w"}},
		{"offline_access where offered", nil, withOffline, prm, []string{"a"}, nil, true, []string{"a", "offline_access"}},
		{"not for grants without refresh", nil, withOffline, prm, []string{"a"}, nil, false, []string{"a"}},
		{"never where not offered", nil, without, prm, []string{"a", "offline_access"}, &Token{Issuer: "i", Scopes: []string{"offline_access"}}, true, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Authorizer{Scopes: tt.configured}
			got := a.scopesFor(&discovery{issuer: "i", as: tt.as, prm: tt.prm}, tt.want, tt.sent, tt.refreshable)
			if len(got) != 0 || len(tt.expect) != 0 {
				if !reflect.DeepEqual(got, tt.expect) {
					t.Fatalf("got %q, want %q", got, tt.expect)
				}
			}
		})
	}
}

func TestFileStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oauth")
	s := &FileStore{Dir: dir}
	ctx := context.Background()
	const server = "https://mcp.example.com/mcp"
	err := s.Update(ctx, server, func(r *Record) (*Record, error) {
		if r != nil {
			t.Fatal("a record before any")
		}
		return &Record{Token: &Token{AccessToken: "secret-access", RefreshToken: "secret-refresh"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(server)
	for path, want := range map[string]os.FileMode{dir: 0o700, p: 0o600} {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode().Perm(), err, want)
		}
	}
	if !strings.HasPrefix(filepath.Base(p), "mcp.example.com_mcp-") {
		t.Errorf("file name %s does not say which server", filepath.Base(p))
	}
	// A failing update writes nothing.
	boom := errors.New("boom")
	if err := s.Update(ctx, server, func(r *Record) (*Record, error) { r.Token = nil; return r, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	r, _ := s.Load(ctx, server)
	if r == nil || r.Token == nil || r.Token.AccessToken != "secret-access" || r.Server != server {
		t.Fatalf("after a failed update: %+v", r)
	}
	// Updates wait for each other.
	inside := make(chan struct{})
	release := make(chan struct{})
	go s.Update(ctx, server, func(r *Record) (*Record, error) { close(inside); <-release; return r, nil })
	<-inside
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := s.Update(short, server, func(r *Record) (*Record, error) { return r, nil }); err == nil {
		t.Fatal("a second update ran while the first held the lock")
	}
	close(release)
	if err := s.Update(ctx, server, func(*Record) (*Record, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// TestSecretsNotShown: tokens, refresh tokens and client secrets appear
// in no description, log line or error.
func TestSecretsNotShown(t *testing.T) {
	tok := &Token{AccessToken: "SECRET-A", RefreshToken: "SECRET-R", Issuer: "https://as", Granted: []string{"read"}, Expiry: time.Now()}
	reg := &Registration{ClientID: "c", ClientSecret: "SECRET-S"}
	cl := RegisteredClient{ID: "c", Secret: "SECRET-S"}
	var logged bytes.Buffer
	slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "token", tok)
	for _, s := range []string{fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v", tok, tok, tok), fmt.Sprintf("%v %+v %#v", reg, reg, reg),
		fmt.Sprintf("%v %#v", cl, cl), logged.String(), (&TokenError{Code: "invalid_grant"}).Error()} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("a secret is shown: %s", s)
		}
	}
	// The whole flow, logged at debug: no secret in the log.
	as := newTestAS(t)
	logged.Reset()
	a := newAuthorizer(as, nil)
	a.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if code, _ := get(t, a, as.mcpURL(), "", ""); code != 200 {
		t.Fatal(code)
	}
	got, _ := a.Token(context.Background())
	for _, secret := range []string{got.AccessToken, got.RefreshToken, "code-1"} {
		if strings.Contains(logged.String(), secret) {
			t.Errorf("the log shows %q:\n%s", secret, logged.String())
		}
	}
}

func TestLoopback(t *testing.T) {
	redirect, err := freeLoopbackURL()
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan string, 1)
	authorize := Loopback(func(ctx context.Context, authURL string) error {
		opened <- authURL
		// The browser, redirected by the authorization server.
		go func() {
			resp, err := http.Get(redirect + "?code=c&state=s&iss=i")
			if err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	q, err := authorize(ctx, "https://as.example.com/authorize?x=1&state=s", redirect)
	if err != nil {
		t.Fatal(err)
	}
	if <-opened != "https://as.example.com/authorize?x=1&state=s" || q.Get("code") != "c" || q.Get("state") != "s" {
		t.Fatalf("got %v", q)
	}
	if _, err := ListenLoopback("http://example.com:80/callback", "s"); err == nil {
		t.Error("listened for a redirect to another machine")
	}
	if _, err := ListenLoopback(redirect, ""); err == nil {
		t.Error("listened for a redirect without a state to check")
	}
}
