package access

import (
	"errors"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/intercept"
)

func compile(t *testing.T, a *config.Access) *Policy {
	t.Helper()
	p, err := Compile(a)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide(t *testing.T) {
	p := compile(t, &config.Access{Rules: []config.AccessRule{
		{Description: "admins", Allow: &config.Condition{Roles: []string{"admin"}}, Tools: []string{"*"}, Prompts: []string{"*"}, Resources: []string{"*"}},
		{Description: "readers", Allow: &config.Condition{Scopes: []string{"files:read"}}, Tools: []string{"files__read_*"}},
		{Description: "no deletes", Deny: &config.Condition{}, Tools: []string{"*__delete_*"}},
		{Description: "alice's", Allow: &config.Condition{Callers: []string{"alice"}}, Tools: []string{"notes__*"}},
		{Description: "eu staff", Allow: &config.Condition{Claims: map[string]any{"region": []any{"eu", "uk"}, "staff": true}}, Tools: []string{"crm__*"}},
		{Description: "view tool", Allow: &config.Condition{Roles: []string{"support"}}, Tools: []string{"support:lookup"}},
		{Description: "docs", Allow: &config.Condition{}, Resources: []string{"file:///docs/*"}},
	}})
	admin := &intercept.Caller{ID: "a", Subject: "root", Roles: []string{"admin"}}
	reader := &intercept.Caller{ID: "r", Scopes: []string{"files:read"}}
	alice := &intercept.Caller{ID: `"iss" subject "alice"`, Subject: "alice"}
	euStaff := &intercept.Caller{ID: "e", Claims: map[string]any{"region": "uk", "staff": true}}
	usStaff := &intercept.Caller{ID: "u", Claims: map[string]any{"region": "us", "staff": true}}
	support := &intercept.Caller{ID: "s", Roles: []string{"support"}}
	tests := []struct {
		name    string
		c       *intercept.Caller
		t       Target
		allowed bool
		rule    int
		missing string
	}{
		{"admin any tool", admin, Target{Kind: Tool, Name: "x__y"}, true, 0, ""},
		{"deny wins over admin", admin, Target{Kind: Tool, Name: "files__delete_all"}, false, 2, ""},
		{"reader reads", reader, Target{Kind: Tool, Name: "files__read_file"}, true, 1, ""},
		{"reader cannot write", reader, Target{Kind: Tool, Name: "files__write_file"}, false, -1, ""},
		{"no scope: step up", alice, Target{Kind: Tool, Name: "files__read_file"}, false, -1, "files:read"},
		{"caller by subject", alice, Target{Kind: Tool, Name: "notes__add"}, true, 3, ""},
		{"claims hold", euStaff, Target{Kind: Tool, Name: "crm__find"}, true, 4, ""},
		{"claim value differs", usStaff, Target{Kind: Tool, Name: "crm__find"}, false, -1, ""},
		{"prompt only by admin", reader, Target{Kind: Prompt, Name: "files__read_file"}, false, -1, ""},
		{"view alias", support, Target{Kind: Tool, Name: "crm__lookup_customer", Alias: "support:lookup"}, true, 5, ""},
		{"resource glob spans slashes", nil, Target{Kind: Resource, Name: "file:///docs/a/b.md"}, true, 6, ""},
		{"resource outside", nil, Target{Kind: Resource, Name: "file:///etc/passwd"}, false, -1, ""},
		{"no caller, caller rule", nil, Target{Kind: Tool, Name: "notes__add"}, false, -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Decide(tt.c, tt.t)
			if d.Allowed != tt.allowed || d.Rule != tt.rule || strings.Join(d.MissingScopes, " ") != tt.missing {
				t.Fatalf("got %+v, want allowed %v by rule %d missing %q", d, tt.allowed, tt.rule, tt.missing)
			}
		})
	}
}

func TestDefaultAllowAndNoSection(t *testing.T) {
	p := compile(t, &config.Access{Default: "allow", Rules: []config.AccessRule{{Deny: &config.Condition{Roles: []string{"guest"}}, Tools: []string{"*"}}}})
	if d := p.Decide(&intercept.Caller{ID: "x"}, Target{Kind: Tool, Name: "a__b"}); !d.Allowed || d.Rule != -1 {
		t.Fatalf("default allow: %+v", d)
	}
	if d := p.Decide(&intercept.Caller{ID: "g", Roles: []string{"guest"}}, Target{Kind: Tool, Name: "a__b"}); d.Allowed {
		t.Fatalf("deny by role: %+v", d)
	}
	if d := compile(t, nil).Decide(nil, Target{Kind: Tool, Name: "a__b"}); !d.Allowed {
		t.Fatalf("no access section: %+v", d)
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name string
		a    config.Access
		want string
	}{
		{"default", config.Access{Default: "maybe"}, `default: must be "allow" or "deny", not "maybe"`},
		{"both", config.Access{Rules: []config.AccessRule{{Allow: &config.Condition{}, Tools: []string{"*"}}, {Allow: &config.Condition{}, Deny: &config.Condition{}, Tools: []string{"*"}}}}, `rules[1]: has both "allow" and "deny"`},
		{"neither", config.Access{Rules: []config.AccessRule{{Tools: []string{"*"}}}}, `rules[0]: needs "allow" or "deny"`},
		{"about nothing", config.Access{Rules: []config.AccessRule{{Allow: &config.Condition{}}}}, `rules[0]: names no "tools"`},
		{"empty pattern", config.Access{Rules: []config.AccessRule{{Allow: &config.Condition{}, Prompts: []string{"a", ""}}}}, `rules[0].prompts[1]: is empty`},
		{"claim value", config.Access{Rules: []config.AccessRule{{Deny: &config.Condition{Claims: map[string]any{"x": map[string]any{}}}, Tools: []string{"*"}}}}, `rules[0].deny.claims.x: must be`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(&tt.a)
			var fe *config.FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"*", "", true},
		{"a__*", "a__b", true},
		{"a__*", "b__a", false},
		{"*__delete_*", "fs__delete_file", true},
		{"*__delete_*", "fs__undelete", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
		{"*a*a", "a", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"file:///docs/*", "file:///docs/x/y", true},
	}
	for _, tt := range tests {
		if got := glob(tt.pat, tt.name); got != tt.want {
			t.Errorf("glob(%q, %q) = %v", tt.pat, tt.name, got)
		}
	}
}

func TestClaimPath(t *testing.T) {
	claims := map[string]any{"realm_access": map[string]any{"roles": []any{"a", "b"}}, "n": float64(3)}
	if v, ok := Claim(claims, "realm_access.roles"); !ok || len(v.([]any)) != 2 {
		t.Fatalf("nested: %v %v", v, ok)
	}
	if !claimHolds(claims, "n", []string{"3"}) || claimHolds(claims, "missing", []string{"x"}) {
		t.Fatal("claimHolds")
	}
}
