package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
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
