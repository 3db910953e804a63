package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/intercept"
)

func parseFile(t *testing.T, body string) *config.File {
	t.Helper()
	f, err := config.Parse("ferry.json", []byte(body), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

const allowAdmins = `{"mcpServers": {}, "access": {"rules": [{"allow": {"roles": ["admin"]}, "tools": ["*"]}]}}`

// A reload puts every part in force or none: a part that does not build
// keeps the others from changing, and the error names it.
func TestPolicyReloadWholeOrNothing(t *testing.T) {
	opts := &gateway.Options{}
	p, err := newServePolicy([]*config.File{parseFile(t, allowAdmins)}, opts, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if len(opts.Middleware) != 1 {
		t.Fatalf("%d middleware, want the access rules' only (no audit section)", len(opts.Middleware))
	}
	guest := &intercept.Caller{ID: "g"}
	tool := access.Target{Kind: access.Tool, Name: "a__b"}
	if p.access.Policy().Visible(guest, tool) {
		t.Fatal("a guest may use what only admins may")
	}
	other := errors.New("views: view \"x\": tool \"y\" is not a server's")
	fail := true
	applied := 0
	p.add(func([]*config.File) (func(), error) {
		if fail {
			return nil, other
		}
		return func() { applied++ }, nil
	})
	everyone := parseFile(t, `{"mcpServers": {}, "access": {"default": "allow"}}`)
	if err := p.reload([]*config.File{everyone}); !errors.Is(err, other) {
		t.Fatalf("reload: %v", err)
	}
	if p.access.Policy().Visible(guest, tool) {
		t.Fatal("a refused configuration's rules were put in force")
	}
	bad := parseFile(t, `{"mcpServers": {}, "access": {"rules": [{"allow": {}, "deny": {}, "tools": ["*"]}]}}`)
	fail = false
	err = p.reload([]*config.File{bad})
	if err == nil || !strings.Contains(err.Error(), `ferry.json: access.rules[0]: has both "allow" and "deny"`) || applied != 0 {
		t.Fatalf("reload of bad rules: %v (applied %d)", err, applied)
	}
	if err := p.reload([]*config.File{everyone}); err != nil || applied != 1 || !p.access.Policy().Visible(guest, tool) {
		t.Fatalf("reload of good rules: %v (applied %d)", err, applied)
	}
}

func TestPolicyAuditSection(t *testing.T) {
	dir := t.TempDir()
	opts := &gateway.Options{}
	f := parseFile(t, `{"mcpServers": {}, "audit": {"file": "`+filepath.Join(dir, "audit.jsonl")+`", "arguments": true}}`)
	p, err := newServePolicy([]*config.File{f}, opts, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if p.audit == nil || len(opts.Middleware) != 2 {
		t.Fatalf("audit %v, %d middleware", p.audit, len(opts.Middleware))
	}
	// A reload that names a file that cannot be made is refused; one
	// that names another file takes it.
	err = p.reload([]*config.File{parseFile(t, `{"mcpServers": {}, "audit": {"file": "`+filepath.Join(dir, "none", "audit.jsonl")+`"}}`)})
	if err == nil || !strings.HasPrefix(err.Error(), "ferry.json: audit.file: ") {
		t.Fatalf("reload with an audit file that cannot be made: %v", err)
	}
	if err := p.reload([]*config.File{parseFile(t, `{"mcpServers": {}, "audit": {"file": "`+filepath.Join(dir, "other.jsonl")+`"}}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.jsonl")); err != nil {
		t.Fatal(err)
	}
	f = parseFile(t, `{"mcpServers": {}, "audit": {"file": "`+filepath.Join(dir, "none", "audit.jsonl")+`"}}`)
	if _, err := newServePolicy([]*config.File{f}, &gateway.Options{}, nil, nil); err == nil || !strings.HasPrefix(err.Error(), "ferry.json: audit.file: ") {
		t.Fatalf("an audit file that cannot be made: %v", err)
	}
}

func TestIdentitySection(t *testing.T) {
	tests := []struct {
		name, identity, err string
	}{
		{"no issuer", `{"resource": "https://mcp.example.com/mcp"}`, "ferry.json: identity.issuer: is required"},
		{"no resource", `{"issuer": "https://idp.example.com"}`, "ferry.json: identity.resource: is required"},
		{"misspelt", `{"issuer": "https://idp.example.com", "resource": "https://mcp.example.com/mcp", "role_claim": "x"}`, `ferry.json: identity.role_claim: unknown object member name`},
		{"bad resource", `{"issuer": "https://idp.example.com", "resource": "mcp.example.com"}`, "ferry.json: identity.resource: "},
		{"secret from a variable not set", `{"issuer": "https://idp.example.com", "resource": "https://mcp.example.com/mcp",
			"introspection": {"url": "https://idp.example.com/introspect", "client_id": "gw", "client_secret": "${FERRY_TEST_UNSET_SECRET}"}}`,
			"ferry.json: identity.introspection.client_secret: variable FERRY_TEST_UNSET_SECRET is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := identityAuth([]*config.File{parseFile(t, `{"mcpServers": {}, "identity": `+tt.identity+`}`)}, nil)
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
		})
	}
	id, err := identityAuth([]*config.File{parseFile(t, `{"mcpServers": {}, "identity": {"issuer": "https://idp.example.com", "resource": "https://mcp.example.com/mcp"}}`)}, nil)
	if err != nil || id.auth() == nil || id.handlers()["GET /.well-known/oauth-protected-resource/mcp"] == nil {
		t.Fatalf("identity: %v %v", id, err)
	}
	var none *identity
	none.stepUp(nil, nil)
	if none.handlers() != nil {
		t.Fatal("no identity section, handlers")
	}
}

func TestRolesOf(t *testing.T) {
	claims := map[string]any{"roles": []any{"a", "b", 3}, "groups": "x y", "realm_access": map[string]any{"roles": []any{"k"}}}
	for claim, want := range map[string]string{"roles": "a b", "groups": "x y", "realm_access.roles": "k", "none": ""} {
		if got := strings.Join(rolesOf(claims, claim), " "); got != want {
			t.Errorf("rolesOf %s = %q, want %q", claim, got, want)
		}
	}
}

// introspector is an authorization server's introspection endpoint (RFC
// 7662) that knows one token, for alice, whose answer carries claims;
// its issuer is its address.
func introspector(t *testing.T, token string, claims map[string]any) *httptest.Server {
	var ts *httptest.Server
	ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ans := map[string]any{"active": false}
		if r.PostFormValue("token") == token {
			ans = map[string]any{"active": true, "iss": ts.URL, "sub": "alice", "aud": "https://gw.example/mcp"}
			maps.Copy(ans, claims)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(ans)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// SIGHUP reloads the identity section with the rest, whole or not at
// all: a request is checked by the section in force when it comes, so
// that after a change of issuer the old issuer's tokens reach nothing
// (and a new issuer's caller is another caller, whom the gateway does
// not let into the old one's sessions); the roles claim and the
// metadata follow. A reload cannot add or remove the section, nor move
// the metadata.
func TestIdentityReload(t *testing.T) {
	a := introspector(t, "tok-a", map[string]any{"roles": []any{"admin"}, "groups": "ops"})
	b := introspector(t, "tok-b", nil)
	section := func(issuer, extra string) *config.File {
		return parseFile(t, `{"mcpServers": {}, "identity": {"issuer": "`+issuer+`", "resource": "https://gw.example/mcp",
			"introspection": {"url": "`+issuer+`/introspect", "client_id": "gw", "client_secret": "s"}`+extra+`}}`)
	}
	log := slog.New(slog.DiscardHandler)
	id, err := identityAuth([]*config.File{section(a.URL, "")}, log)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newServePolicy([]*config.File{section(a.URL, "")}, &gateway.Options{}, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	p.add(reloadIdentity(id, log))
	opts := &gateway.Options{Hears: p.access.Hears}
	id.hearIssuer(opts)
	hears := func(issuer string) bool {
		return opts.Hears(&intercept.Caller{ID: "x", Issuer: issuer}, nil, gateway.Notice{Method: "notifications/message", Server: "s"})
	}
	if !hears(a.URL) {
		t.Fatal("a's caller does not hear what a server says")
	}
	h := id.auth()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := intercept.CallerFrom(r.Context())
		fmt.Fprintf(w, "%s %v", c.ID, c.Roles)
	}))
	metadataPath := "/.well-known/oauth-protected-resource/mcp"
	meta := id.handlers()["GET "+metadataPath]
	call := func(token string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("{}"))
		r.Header.Set("Authorization", "Bearer "+token)
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			return strconv.Itoa(rec.Code)
		}
		return rec.Body.String()
	}
	issuerOf := func() string {
		rec := httptest.NewRecorder()
		meta.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, metadataPath, nil))
		var doc struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		json.NewDecoder(rec.Body).Decode(&doc)
		return strings.Join(doc.AuthorizationServers, " ")
	}
	aliceOfA := strconv.Quote(a.URL) + " subject \"alice\""
	if got, want := call("tok-a"), aliceOfA+" [admin]"; got != want || issuerOf() != a.URL {
		t.Fatalf("before any reload: %q (metadata %s), want %q", got, issuerOf(), want)
	}

	steps := []struct {
		name  string
		files []*config.File
		err   string
		tokA  string // what a request with tok-a then gets
		tokB  string
	}{
		{"the roles claim", []*config.File{section(a.URL, `, "roles_claim": "groups"`)}, "", aliceOfA + " [ops]", "401"},
		{"a section with an error", []*config.File{section(a.URL, `, "roles_clam": "x"`)}, "ferry.json: identity.roles_clam: unknown", aliceOfA + " [ops]", "401"},
		{"another part with an error", []*config.File{parseFile(t, `{"mcpServers": {}, "identity": {"issuer": "`+b.URL+`", "resource": "https://gw.example/mcp",
			"introspection": {"url": "`+b.URL+`/introspect"}}, "access": {"default": "maybe"}}`)}, "ferry.json: access.default", aliceOfA + " [ops]", "401"},
		{"no section", []*config.File{parseFile(t, `{"mcpServers": {}}`)}, "identity: a reload cannot remove the section", aliceOfA + " [ops]", "401"},
		{"the metadata moved", []*config.File{parseFile(t, `{"mcpServers": {}, "identity": {"issuer": "`+a.URL+`", "resource": "https://gw.example/other"}}`)},
			"identity.resource: a reload cannot move the metadata", aliceOfA + " [ops]", "401"},
		{"another issuer", []*config.File{section(b.URL, "")}, "", "401", strconv.Quote(b.URL) + " subject \"alice\" []"},
	}
	for _, s := range steps {
		err := p.reload(s.files)
		if s.err == "" && err != nil || s.err != "" && (err == nil || !strings.Contains(err.Error(), s.err)) {
			t.Fatalf("%s: reload: %v, want %q", s.name, err, s.err)
		}
		if got := call("tok-a"); got != s.tokA {
			t.Errorf("%s: tok-a: %q, want %q", s.name, got, s.tokA)
		}
		if got := call("tok-b"); got != s.tokB {
			t.Errorf("%s: tok-b: %q, want %q", s.name, got, s.tokB)
		}
	}
	if issuerOf() != b.URL {
		t.Errorf("the metadata names %s after the change of issuer", issuerOf())
	}
	if hears(a.URL) || !hears(b.URL) {
		t.Errorf("after the change of issuer, a's caller hears: %v; b's: %v", hears(a.URL), hears(b.URL))
	}
	if _, err := reloadIdentity(nil, log)([]*config.File{section(a.URL, "")}); err == nil || !strings.Contains(err.Error(), "cannot add") {
		t.Errorf("a reload adding the section: %v", err)
	}
}
