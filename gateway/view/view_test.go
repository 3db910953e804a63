package view

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

func compiled(t *testing.T, views string) *Set { return compiledF(t, views) }

func compiledF(t testing.TB, views string) *Set {
	t.Helper()
	f, err := config.Parse("ferry.json", []byte(`{"mcpServers": {}, "views": `+views+`}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := config.ReadViews([]*config.File{f}, config.Vars{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestArguments(t *testing.T) {
	v := compiled(t, `{"v": {"tools": {"a__x": {"name": "x", "fixed": {"repo": "acme/app", "limit": 5}}, "a__y": {}}}}`).Get("v")
	tests := []struct {
		name, args string
		want       string // the arguments sent; "" when refused
		refused    string // the argument named in the error
	}{
		{"none", ``, `{"limit":5,"repo":"acme/app"}`, ""},
		{"empty", `{}`, `{"limit":5,"repo":"acme/app"}`, ""},
		{"spaced", " { } ", `{"limit":5,"repo":"acme/app"}`, ""},
		{"others kept", `{"q": "bug", "n": {"repo": 1}}`, `{"limit":5,"repo":"acme/app","q": "bug", "n": {"repo": 1}}`, ""},
		{"a fixed one sent", `{"q": "bug", "repo": "evil/app"}`, "", "repo"},
		{"escaped, still fixed", `{"\u006cimit": 500}`, "", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args jsontext.Value
			if tt.args != "" {
				args = jsontext.Value(tt.args)
			}
			got, err := v.Tool("x").Arguments(args)
			if tt.refused != "" {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, `"`+tt.refused+`"`) {
					t.Fatalf("error %v, want -32602 naming %s", err, tt.refused)
				}
				return
			}
			if err != nil || string(got) != tt.want || !got.IsValid() {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	same := jsontext.Value(`{"q": 1}`)
	if got, err := v.Tool("a__y").Arguments(same); err != nil || &got[0] != &same[0] {
		t.Errorf("without fixed arguments, the client's are not passed as they are: %s %v", got, err)
	}
}

func TestToolsPickedRenamedAndHidden(t *testing.T) {
	v := compiled(t, `{"v": {"tools": {
		"b__search": {"name": "find", "title": "Find", "description": "Find it.", "fixed": {"repo": "acme/app"}},
		"a__echo": {}
	}}}`).Get("v")
	all := []protocol.Tool{
		{Name: "a__echo", Description: "Echo.", InputSchema: jsontext.Value(`{"type":"object"}`)},
		{Name: "a__secret", InputSchema: jsontext.Value(`{"type":"object"}`)},
		{Name: "b__search", Title: "Search", Annotations: &protocol.ToolAnnotations{Title: "Search"}, Description: "Search.", InputSchema: jsontext.Value(
			`{"type":"object","properties":{"q":{"type":"string"},"repo":{"type":"string"}},"required":["repo","q"],"additionalProperties":false}`)},
	}
	got := v.Tools(all)
	if len(got) != 2 || got[0].Name != "find" || got[1].Name != "a__echo" {
		t.Fatalf("tools %+v", got)
	}
	if got[0].Description != "Find it." || got[1].Description != "Echo." {
		t.Errorf("descriptions %q %q", got[0].Description, got[1].Description)
	}
	if got[0].Title != "Find" || got[0].Annotations.Title != "Find" || all[2].Annotations.Title != "Search" {
		t.Errorf("titles %q %q (the aggregated list's %q)", got[0].Title, got[0].Annotations.Title, all[2].Annotations.Title)
	}
	want := `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false}`
	if string(got[0].InputSchema) != want {
		t.Errorf("schema\n %s\nwant\n %s", got[0].InputSchema, want)
	}
	if string(all[2].InputSchema) == want || all[2].Name != "b__search" {
		t.Error("the aggregated list was changed")
	}
	if v.Tool("b__search") != nil || v.Tool("find").Original != "b__search" {
		t.Error("the view's names")
	}
}

func TestPrompts(t *testing.T) {
	v := compiled(t, `{"v": {"prompts": {"a__greet": {"name": "hello", "fixed": {"who": "team"}}}}}`).Get("v")
	all := []protocol.Prompt{{Name: "a__greet", Arguments: []protocol.PromptArgument{{Name: "who", Required: true}, {Name: "tone"}}}, {Name: "a__other"}}
	got := v.Prompts(all)
	if len(got) != 1 || got[0].Name != "hello" || len(got[0].Arguments) != 1 || got[0].Arguments[0].Name != "tone" {
		t.Fatalf("prompts %+v", got)
	}
	if len(all[0].Arguments) != 2 {
		t.Error("the aggregated list was changed")
	}
	args, err := v.Prompt("hello").PromptArguments(map[string]string{"tone": "warm"})
	if err != nil || args["who"] != "team" || args["tone"] != "warm" {
		t.Errorf("arguments %v %v", args, err)
	}
	if _, err := v.Prompt("hello").PromptArguments(map[string]string{"who": "me"}); err == nil || !strings.Contains(err.Error(), `"who"`) {
		t.Errorf("a fixed argument sent: %v", err)
	}
}

func TestResources(t *testing.T) {
	v := compiled(t, `{"v": {"resources": {"file:///faq.md": {"name": "faq", "description": "The FAQ"}, "tickets://{id}": {"description": "A ticket"}}}}`).Get("v")
	rs := v.Resources([]protocol.Resource{{URI: "file:///faq.md", Name: "faq.md"}, {URI: "file:///secret"}, {URI: "tickets://7"}})
	if len(rs) != 2 || rs[0].Name != "faq" || rs[0].Description != "The FAQ" || rs[1].URI != "tickets://7" {
		t.Errorf("resources %+v", rs)
	}
	ts := v.Templates([]protocol.ResourceTemplate{{URITemplate: "tickets://{id}"}, {URITemplate: "secret://{id}"}})
	if len(ts) != 1 || ts[0].Description != "A ticket" {
		t.Errorf("templates %+v", ts)
	}
	for uri, want := range map[string]bool{"file:///faq.md": true, "tickets://42": true, "file:///secret": false, "secret://1": false} {
		if v.Readable(uri) != want {
			t.Errorf("Readable(%s) = %v", uri, !want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	tests := []struct {
		name  string
		views []*config.View
		want  string
	}{
		{"clash", []*config.View{{Name: "v", Tools: []config.ViewItem{{From: "a__x", Name: "go"}, {From: "b__y", Name: "go"}}}},
			`views.v.tools: "a__x" and "b__y" are both named "go" in the view`},
		{"bad name", []*config.View{{Name: "a/b"}}, `views: invalid view name "a/b"`},
		{"twice", []*config.View{{Name: "v"}, {Name: "v"}}, `views: two views named "v"`},
		{"bad template", []*config.View{{Name: "v", Resources: []config.ViewItem{{From: "x://{"}}}}, `views.v.resources["x://{"]: not a URI template`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.views); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %s", err, tt.want)
			}
		})
	}
}

// Whatever arguments a caller gives, Arguments returns one valid JSON
// object with each fixed argument once and every argument sent, or
// -32602.
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{``, `{}`, ` { } `, `{"q":1}`, `{"repo":"x"}`, `{"a":`, `{"a":1}}`, `{"a":1} {}`, `[1]`, `{"\u0072epo":1}`, `{"a":{"repo":1}}`} {
		f.Add(seed)
	}
	v := compiledF(f, `{"v": {"tools": {"a__x": {"name": "x", "fixed": {"repo": "acme/app", "n": [1, {"k": null}]}}}}}`).Get("v")
	f.Fuzz(func(t *testing.T, args string) {
		var in jsontext.Value
		if args != "" {
			in = jsontext.Value(args)
		}
		out, err := v.Tool("x").Arguments(in)
		if err != nil {
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("%q: error %v, want -32602", args, err)
			}
			return
		}
		var got, sent map[string]jsontext.Value
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q gave %q, not an object: %v", args, out, err)
		}
		if strings.TrimSpace(args) != "" && json.Unmarshal(in, &sent) != nil {
			t.Fatalf("%q, not an object, was taken: %q", args, out)
		}
		if string(got["repo"]) != `"acme/app"` || string(got["n"]) != `[1,{"k":null}]` || len(got) != len(sent)+2 {
			t.Fatalf("%q gave %q", args, out)
		}
	})
}
