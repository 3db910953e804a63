package metadata

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []Challenge
	}{
		{"bearer with parameters", []string{`Bearer resource_metadata="http://localhost:1/.well-known/oauth-protected-resource/mcp", scope="mcp:basic"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "http://localhost:1/.well-known/oauth-protected-resource/mcp", "scope": "mcp:basic"}}}},
		{"case and spacing", []string{`bearer   Scope = "a b" ,ERROR=insufficient_scope`},
			[]Challenge{{Scheme: "bearer", Params: map[string]string{"scope": "a b", "error": "insufficient_scope"}}}},
		{"two challenges in one value", []string{`Basic realm="x", Bearer error="invalid_token", error_description="expired"`},
			[]Challenge{
				{Scheme: "Basic", Params: map[string]string{"realm": "x"}},
				{Scheme: "Bearer", Params: map[string]string{"error": "invalid_token", "error_description": "expired"}},
			}},
		{"two values", []string{`DPoP error="use_dpop_nonce"`, `Bearer`},
			[]Challenge{
				{Scheme: "DPoP", Params: map[string]string{"error": "use_dpop_nonce"}},
				{Scheme: "Bearer", Params: map[string]string{}},
			}},
		{"escapes in a quoted string", []string{`Bearer error_description="a \"quoted\" \\ word, here"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error_description": `a "quoted" \ word, here`}}}},
		{"token68", []string{`Negotiate YWJj==, Bearer realm="r"`},
			[]Challenge{
				{Scheme: "Negotiate", Params: map[string]string{}, Token68: "YWJj=="},
				{Scheme: "Bearer", Params: map[string]string{"realm": "r"}},
			}},
		{"scheme without parameters then another", []string{`Bearer, Basic realm="x"`},
			[]Challenge{
				{Scheme: "Bearer", Params: map[string]string{}},
				{Scheme: "Basic", Params: map[string]string{"realm": "x"}},
			}},
		{"unterminated quote keeps what came before", []string{`Bearer scope="a", error="oops`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "a"}}}},
		{"first of a repeated parameter", []string{`Bearer scope="a", scope="b"`},
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "a"}}}},
		{"empty", []string{"", " , "}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseChallenges(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseChallenges(%q)\n got %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestChallengeString(t *testing.T) {
	c := Challenge{Scheme: "Bearer", Params: map[string]string{
		"error": "insufficient_scope", "scope": "a b", "resource_metadata": "https://x/.well-known/oauth-protected-resource", "error_description": `say "hi"`,
	}}
	got := c.String(ParamError, ParamScope, ParamResourceMetadata, ParamErrorDescription, "absent")
	want := `Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource", error_description="say \"hi\""`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back := ParseChallenges([]string{got})
	if len(back) != 1 || !reflect.DeepEqual(back[0].Params, c.Params) {
		t.Fatalf("round trip: %#v", back)
	}
}

func TestWellKnownURLs(t *testing.T) {
	tests := []struct {
		fn   func(string) ([]string, error)
		in   string
		want []string
	}{
		{ProtectedResourceURLs, "https://mcp.example.com/public/mcp",
			[]string{"https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp", "https://mcp.example.com/.well-known/oauth-protected-resource"}},
		{ProtectedResourceURLs, "http://localhost:3000", []string{"http://localhost:3000/.well-known/oauth-protected-resource"}},
		{ProtectedResourceURLs, "http://localhost:3000/", []string{"http://localhost:3000/.well-known/oauth-protected-resource"}},
		{AuthorizationServerURLs, "https://auth.example.com/tenant1",
			[]string{"https://auth.example.com/.well-known/oauth-authorization-server/tenant1", "https://auth.example.com/.well-known/openid-configuration/tenant1", "https://auth.example.com/tenant1/.well-known/openid-configuration"}},
		{AuthorizationServerURLs, "https://auth.example.com",
			[]string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}},
		{AuthorizationServerURLs, "http://localhost:9998/",
			[]string{"http://localhost:9998/.well-known/oauth-authorization-server", "http://localhost:9998/.well-known/openid-configuration"}},
	}
	for _, tt := range tests {
		got, err := tt.fn(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"mcp.example.com", "ftp://x/y", "https://x/y#frag", "://"} {
		if _, err := ProtectedResourceURLs(bad); err == nil {
			t.Errorf("ProtectedResourceURLs(%q) accepted", bad)
		}
	}
	if p, _ := ProtectedResourcePath("https://mcp.example.com/mcp"); p != "/.well-known/oauth-protected-resource/mcp" {
		t.Errorf("ProtectedResourcePath = %q", p)
	}
}

func TestCheckResource(t *testing.T) {
	tests := []struct {
		resource, server string
		ok               bool
	}{
		{"http://localhost:3000/mcp", "http://localhost:3000/mcp", true},
		{"http://localhost:3000", "http://localhost:3000/mcp", true},
		{"HTTP://LocalHost:3000", "http://localhost:3000/mcp", true},
		{"https://mcp.example.com/tenant", "https://mcp.example.com/tenant/mcp", true},
		{"https://mcp.example.com/ten", "https://mcp.example.com/tenant/mcp", false},
		{"https://evil.example.com/mcp", "http://localhost:3000/mcp", false},
		{"http://localhost:3001/mcp", "http://localhost:3000/mcp", false},
		{"http://localhost:3000/other", "http://localhost:3000/mcp", false},
		{"https://localhost:3000/mcp", "http://localhost:3000/mcp", false},
		{"http://localhost:3000/mcp#x", "http://localhost:3000/mcp", false},
	}
	for _, tt := range tests {
		err := CheckResource(tt.resource, tt.server)
		if (err == nil) != tt.ok {
			t.Errorf("CheckResource(%q, %q) = %v", tt.resource, tt.server, err)
		}
		if err != nil && tt.ok == false && !errors.Is(err, ErrResourceMismatch) && tt.resource != "http://localhost:3000/mcp#x" {
			t.Errorf("CheckResource(%q, %q): %v is not ErrResourceMismatch", tt.resource, tt.server, err)
		}
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer resource_metadata="x", scope="a b"`, `Basic realm="x", Bearer`, `Negotiate abc==`, `Bearer error="a\"b"`, `,,`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, c := range ParseChallenges([]string{s}) {
			if c.Scheme == "" {
				t.Fatalf("empty scheme from %q", s)
			}
			// What was parsed writes back into what parses the same.
			names := make([]string, 0, len(c.Params))
			for k := range c.Params {
				names = append(names, k)
			}
			if c.Token68 != "" {
				continue
			}
			back := ParseChallenges([]string{c.String(names...)})
			if len(back) == 0 || !reflect.DeepEqual(back[0].Params, c.Params) {
				t.Fatalf("%q: %#v does not survive a round trip: %#v", s, c, back)
			}
		}
	})
}
