package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSection(t *testing.T) {
	type rule struct {
		Allow map[string][]string `json:"allow"`
		Tools []string            `json:"tools"`
	}
	type access struct {
		Rules   []rule `json:"rules"`
		Default string `json:"default"`
	}
	tests := []struct {
		name, file string
		want       string // in the error; "" for none
		rules      int
	}{
		{"ok with comments", `{"mcpServers": {}, // the servers
			"access": {"rules": [{"allow": {"roles": ["a"]}, "tools": ["x__*"],},], /* x */ "default": "deny"}}`, "", 1},
		{"unknown member", `{"mcpServers": {}, "access": {"rules": [{}, {"alow": {}}]}}`, `f.json: access.rules[1].alow: unknown object member name`, 0},
		{"wrong kind", `{"mcpServers": {}, "access": {"rules": [{"tools": "x"}]}}`, "f.json: access.rules[0].tools: ", 0},
		{"not an object", `{"mcpServers": {}, "access": []}`, "f.json: access: ", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.json", []byte(tt.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			var a access
			ok, err := f.Section("access", &a)
			if !ok {
				t.Fatal("no access section")
			}
			if tt.want == "" {
				if err != nil || len(a.Rules) != tt.rules || a.Default != "deny" {
					t.Fatalf("got %+v, %v", a, err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
}

func TestSectionAbsentAndFirst(t *testing.T) {
	a, _ := Parse("a.json", []byte(`{"mcpServers": {}}`), nil)
	b, _ := Parse("b.json", []byte(`{"mcpServers": {}, "audit": {"file": "b"}}`), nil)
	c, _ := Parse("c.json", []byte(`{"mcpServers": {}, "audit": {"file": "c"}}`), nil)
	var v struct {
		File string `json:"file"`
	}
	if ok, err := a.Section("audit", &v); ok || err != nil {
		t.Fatalf("absent section: %v %v", ok, err)
	}
	from, err := FirstSection([]*File{a, b, c}, "audit", &v)
	if err != nil || from != b || v.File != "b" {
		t.Fatalf("FirstSection: %v %v %q", from, err, v.File)
	}
}

func TestSectionFieldError(t *testing.T) {
	err := SectionError("f.json", "access", &FieldError{Path: "rules[3].tools[0]", Err: errors.New("bad pattern")})
	if got, want := err.Error(), "f.json: access.rules[3].tools[0]: bad pattern"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
