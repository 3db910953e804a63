package config

import (
	"strings"
	"testing"
)

func TestReadViews(t *testing.T) {
	f, err := Parse("f.json", []byte(`{"mcpServers": {}, // the servers
		"views": {
			"support": {
				"tools": {
					"github__search_issues": {"name": "search", "title": "Search", "description": "Search tickets", "fixed": {"repo": "${REPO}", "limit": 5, "labels": [ "a", "b" ]},},
					"slack__post": {},
					"everything__echo": null
				},
				"prompts": {"github__triage": {"name": "triage", "fixed": {"team": "support"}}},
				"resources": {"file:///faq.md": {"description": "The FAQ"}, "tickets://{id}": {}}
			},
			"empty": {}
		}}`), &Options{Vars: testVars()})
	if err != nil {
		t.Fatal(err)
	}
	vars := testVars()
	inner := vars.Lookup
	vars.Lookup = func(k string) (string, bool) {
		if k == "REPO" {
			return "acme/support", true
		}
		return inner(k)
	}
	views, err := ReadViews([]*File{{Path: "none.json"}, f}, vars)
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || views[0].Name != "support" || views[1].Name != "empty" {
		t.Fatalf("views %+v", views)
	}
	v := views[0]
	var froms []string
	for _, it := range v.Tools {
		froms = append(froms, it.From)
	}
	if got := strings.Join(froms, " "); got != "github__search_issues slack__post everything__echo" {
		t.Errorf("tools in the file's order: got %s", got)
	}
	search := v.Tools[0]
	if search.Shown() != "search" || search.Title != "Search" || search.Description != "Search tickets" ||
		string(search.Fixed["repo"]) != `"acme/support"` || string(search.Fixed["limit"]) != "5" || string(search.Fixed["labels"]) != `["a","b"]` {
		t.Errorf("search: %+v %s %s", search, search.Fixed["repo"], search.Fixed["limit"])
	}
	if v.Tools[1].Shown() != "slack__post" || v.Tools[1].Fixed != nil {
		t.Errorf("slack__post: %+v", v.Tools[1])
	}
	if len(v.Prompts) != 1 || string(v.Prompts[0].Fixed["team"]) != `"support"` {
		t.Errorf("prompts: %+v", v.Prompts)
	}
	if len(v.Resources) != 2 || v.Resources[0].Description != "The FAQ" || v.Resources[1].From != "tickets://{id}" {
		t.Errorf("resources: %+v", v.Resources)
	}
}

func TestReadViewsErrors(t *testing.T) {
	tests := []struct {
		name, views string
		want        string // the whole error
	}{
		{"not an object", `[]`, `f.json: views: must be an object, not an array`},
		{"view not an object", `{"v": 1}`, `f.json: views.v: must be an object, not a number`},
		{"bad view name", `{"a/b": {}}`, `f.json: views["a/b"]: a view's name is 1 to 128 of A-Z, a-z, 0-9, _, - and . (it is part of the view's URL)`},
		{"unknown kind", `{"v": {"tool": {}}}`, `f.json: views.v.tool: unknown member: a view has "tools", "prompts" and "resources"`},
		{"unknown item member", `{"v": {"tools": {"a__x": {"fixd": {}}}}}`, `f.json: views.v.tools.a__x.fixd: unknown member: an item of tools has "name", "title", "description" and "fixed"`},
		{"fixed on a resource", `{"v": {"resources": {"file:///a": {"fixed": {}}}}}`, `f.json: views.v.resources["file:///a"].fixed: unknown member: an item of resources has "name", "title" and "description"`},
		{"item not an object", `{"v": {"tools": {"a__x": "search"}}}`, `f.json: views.v.tools.a__x: must be an object, not a string`},
		{"bad tool name", `{"v": {"tools": {"a__x": {"name": "two words"}}}}`, `f.json: views.v.tools.a__x.name: a name is 1 to 128 of A-Z, a-z, 0-9, dot, _ and -`},
		{"name not a string", `{"v": {"tools": {"a__x": {"description": 3}}}}`, `f.json: views.v.tools.a__x.description: must be a string, not a number`},
		{"prompt argument not a string", `{"v": {"prompts": {"a__p": {"fixed": {"n": 3}}}}}`, `f.json: views.v.prompts.a__p.fixed.n: a prompt's argument is a string, not a number`},
		{"clash of renames", `{"v": {"tools": {"a__x": {"name": "go"}, "b__y": {"name": "go"}}}}`, `f.json: views.v.tools: "a__x" and "b__y" are both named "go" in the view`},
		{"clash with a kept name", `{"v": {"prompts": {"a__x": {}, "b__y": {"name": "a__x"}}}}`, `f.json: views.v.prompts: "a__x" and "b__y" are both named "a__x" in the view`},
		{"unset variable, value unsaid", `{"v": {"tools": {"a__x": {"fixed": {"key": "${NOPE}"}}}}}`, `f.json: views.v.tools.a__x.fixed.key: variable NOPE is not set`},
		{"duplicate item", `{"v": {"tools": {"a__x": {}, "a__x": {}}}}`, `f.json: views.v.tools: "a__x" is named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("f.json", []byte(`{"mcpServers": {}, "views": `+tt.views+`}`), &Options{Vars: testVars()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ReadViews([]*File{f}, testVars())
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error\n %v\nwant\n %s", err, tt.want)
			}
		})
	}
}

// TestReadViewsHidesFixedValues: a fixed value may be a secret, and an
// error about it never quotes it.
func TestReadViewsHidesFixedValues(t *testing.T) {
	f, err := Parse("f.json", []byte(`{"mcpServers": {}, "views": {"v": {"prompts": {"a__p": {"fixed": {"key": {"secret": "sk-live-123"}}}}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ReadViews([]*File{f}, Vars{})
	if err == nil || strings.Contains(err.Error(), "sk-live") {
		t.Fatalf("error %v", err)
	}
}
