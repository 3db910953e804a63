// Package view compiles the gateway's views: named, curated sets of the
// tools, prompts and resources of its servers, each served as a server
// of its own (/views/NAME/mcp). A view shows only what it names, under
// the name and description it gives, and sets its fixed arguments on
// every call, hiding them from its clients.
//
// A view is compiled from the configuration ([New]) and is immutable: a
// gateway reloading its configuration compiles a new [Set] and swaps it
// in whole.
//
// A view names its items as the gateway's aggregated endpoint does
// (SERVER__TOOL), so that what is written for one is written for the
// other: the gateway resolves a view's names to the servers' own for its
// middleware (access rules, limits, audit) as it does for /mcp.
package view

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/yosida95/uritemplate/v3"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Set is the views of a configuration, by name.
type Set struct {
	views map[string]*View
	names []string // in the configuration's order
}

// New compiles views, as [config.ReadViews] reads them. The error names
// the view and the item at fault.
func New(views []*config.View) (*Set, error) {
	s := &Set{views: make(map[string]*View, len(views))}
	for _, cv := range views {
		if !config.ValidViewName(cv.Name) {
			return nil, fmt.Errorf("views: invalid view name %q", cv.Name)
		}
		if s.views[cv.Name] != nil {
			return nil, fmt.Errorf("views: two views named %q", cv.Name)
		}
		v, err := compile(cv)
		if err != nil {
			return nil, err
		}
		s.views[cv.Name] = v
		s.names = append(s.names, cv.Name)
	}
	return s, nil
}

// Names are the views' names in the configuration's order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.names)
}

// Get returns the view named name, or nil.
func (s *Set) Get(name string) *View {
	if s == nil {
		return nil
	}
	return s.views[name]
}

// View is one compiled view.
type View struct {
	name    string
	tools   table
	prompts table
	// resources holds the exact URIs; templates the URI templates, which
	// also let a client read the URIs they match.
	resources map[string]*Item
	resOrder  []string
	templates []*Item
}

// Item is one tool or prompt of a view, or one resource.
type Item struct {
	// Original names it on the gateway's aggregated endpoint: SERVER__TOOL
	// for a tool or prompt, a URI or URI template for a resource.
	Original string
	// Name is what the view calls it; Title and Description, when not
	// empty, replace its own.
	Name        string
	Title       string
	Description string
	// fixed are the arguments set on every call, by name; fixedNames the
	// names in order.
	fixed      map[string]jsontext.Value
	fixedNames []string
	template   *uritemplate.Template // a resource template's
}

// table is the tools or the prompts of a view, by both names.
type table struct {
	byName     map[string]*Item
	byOriginal map[string]*Item
	order      []*Item
}

func compile(cv *config.View) (*View, error) {
	v := &View{name: cv.Name, resources: map[string]*Item{}}
	var err error
	if v.tools, err = compileTable(cv.Name, "tools", cv.Tools); err != nil {
		return nil, err
	}
	if v.prompts, err = compileTable(cv.Name, "prompts", cv.Prompts); err != nil {
		return nil, err
	}
	for _, ci := range cv.Resources {
		it := &Item{Original: ci.From, Name: ci.Name, Title: ci.Title, Description: ci.Description}
		if !strings.Contains(ci.From, "{") {
			v.resources[ci.From] = it
			v.resOrder = append(v.resOrder, ci.From)
			continue
		}
		if it.template, err = uritemplate.New(ci.From); err != nil {
			return nil, fmt.Errorf("views.%s.resources[%q]: not a URI template: %v", cv.Name, ci.From, err)
		}
		v.templates = append(v.templates, it)
	}
	return v, nil
}

func compileTable(view, kind string, items []config.ViewItem) (table, error) {
	t := table{byName: map[string]*Item{}, byOriginal: map[string]*Item{}}
	for _, ci := range items {
		it := &Item{Original: ci.From, Name: ci.Shown(), Title: ci.Title, Description: ci.Description, fixed: ci.Fixed}
		it.fixedNames = slices.Sorted(maps.Keys(ci.Fixed))
		if other := t.byName[it.Name]; other != nil {
			return table{}, fmt.Errorf("views.%s.%s: %q and %q are both named %q in the view", view, kind, other.Original, it.Original, it.Name)
		}
		if t.byOriginal[it.Original] != nil {
			return table{}, fmt.Errorf("views.%s.%s: %q is named twice", view, kind, it.Original)
		}
		t.byName[it.Name] = it
		t.byOriginal[it.Original] = it
		t.order = append(t.order, it)
	}
	return t, nil
}

// Name is the view's name.
func (v *View) Name() string { return v.name }

// Tool returns the view's tool named name, or nil.
func (v *View) Tool(name string) *Item { return v.tools.byName[name] }

// Prompt returns the view's prompt named name, or nil.
func (v *View) Prompt(name string) *Item { return v.prompts.byName[name] }

// Tools returns the view's tools out of all, the aggregated endpoint's,
// in the view's order: renamed, described, their fixed arguments taken
// out of their input schemas. A tool the view names that all lacks (its
// server is down, or no longer has it) is left out.
func (v *View) Tools(all []protocol.Tool) []protocol.Tool {
	return pick(v.tools, all, func(t *protocol.Tool) string { return t.Name }, func(it *Item, t protocol.Tool) protocol.Tool {
		t.Name = it.Name
		t.Title, t.Description = it.override(t.Title, t.Description)
		if t.Annotations != nil && it.Title != "" {
			a := *t.Annotations // shared with the aggregated list
			a.Title = it.Title
			t.Annotations = &a
		}
		if len(it.fixed) > 0 {
			t.InputSchema = hideProperties(t.InputSchema, it.fixed)
		}
		return t
	})
}

// Prompts returns the view's prompts out of all, as Tools does tools:
// the fixed arguments are not among their arguments.
func (v *View) Prompts(all []protocol.Prompt) []protocol.Prompt {
	return pick(v.prompts, all, func(p *protocol.Prompt) string { return p.Name }, func(it *Item, p protocol.Prompt) protocol.Prompt {
		p.Name = it.Name
		p.Title, p.Description = it.override(p.Title, p.Description)
		if len(it.fixed) > 0 {
			p.Arguments = slices.DeleteFunc(slices.Clone(p.Arguments), func(a protocol.PromptArgument) bool {
				_, fixed := it.fixed[a.Name]
				return fixed
			})
		}
		return p
	})
}

// pick returns the items of all that t names, in t's order, adapted.
func pick[T any](t table, all []T, nameOf func(*T) string, adapt func(*Item, T) T) []T {
	at := make(map[string]int, len(t.order))
	for i := range all {
		if t.byOriginal[nameOf(&all[i])] != nil {
			at[nameOf(&all[i])] = i
		}
	}
	out := make([]T, 0, len(at))
	for _, it := range t.order {
		if i, ok := at[it.Original]; ok {
			out = append(out, adapt(it, all[i]))
		}
	}
	return out
}

// MissingTools returns the tools the view names, as the aggregated
// endpoint names them, that has says are not there; MissingPrompts the
// prompts.
func (v *View) MissingTools(has func(original string) bool) []string { return missing(v.tools, has) }

// MissingPrompts is MissingTools for prompts.
func (v *View) MissingPrompts(has func(original string) bool) []string {
	return missing(v.prompts, has)
}

func missing(t table, has func(string) bool) []string {
	var out []string
	for _, it := range t.order {
		if !has(it.Original) {
			out = append(out, it.Original)
		}
	}
	return out
}

// Resources returns the view's resources out of all: those it names by
// URI, described as it says, and those a template of it matches.
func (v *View) Resources(all []protocol.Resource) []protocol.Resource {
	var out []protocol.Resource
	for _, r := range all {
		if it := v.resources[r.URI]; it != nil {
			if it.Name != "" {
				r.Name = it.Name
			}
			r.Title, r.Description = it.override(r.Title, r.Description)
			out = append(out, r)
		} else if v.templateOf(r.URI) != nil {
			out = append(out, r)
		}
	}
	return out
}

// Templates returns the view's resource templates out of all.
func (v *View) Templates(all []protocol.ResourceTemplate) []protocol.ResourceTemplate {
	var out []protocol.ResourceTemplate
	for _, t := range all {
		i := slices.IndexFunc(v.templates, func(it *Item) bool { return it.Original == t.URITemplate })
		if i < 0 {
			continue
		}
		it := v.templates[i]
		if it.Name != "" {
			t.Name = it.Name
		}
		t.Title, t.Description = it.override(t.Title, t.Description)
		out = append(out, t)
	}
	return out
}

// Readable reports whether the view shows the resource at uri: it names
// it, or one of its templates matches it.
func (v *View) Readable(uri string) bool {
	return v.resources[uri] != nil || v.templateOf(uri) != nil
}

// CompletesTemplate reports whether the view shows the resource template
// (or resource) uri, for completion/complete.
func (v *View) CompletesTemplate(uri string) bool {
	return v.resources[uri] != nil || slices.ContainsFunc(v.templates, func(it *Item) bool { return it.Original == uri })
}

func (v *View) templateOf(uri string) *Item {
	for _, it := range v.templates {
		if it.template.Match(uri) != nil {
			return it
		}
	}
	return nil
}

// override returns an item's title and description as the view shows
// them: its own, but for what the view replaces.
func (it *Item) override(title, description string) (string, string) {
	if it.Title != "" {
		title = it.Title
	}
	if it.Description != "" {
		description = it.Description
	}
	return title, description
}

// fixedError is the -32602 a client gets for sending a fixed argument.
func fixedError(item, arg string) error {
	e := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %q: argument %q is set by the view, and may not be sent", item, arg)
	e.Data, _ = json.Marshal(map[string]string{"argument": arg})
	return e
}

// Arguments returns the arguments of a call of the tool: args, the
// client's (a JSON object; nil or blank for none), with the fixed arguments
// added. A client that sends one of them gets -32602 naming it. Without
// fixed arguments args is returned as it is, uncopied.
func (it *Item) Arguments(args jsontext.Value) (jsontext.Value, error) {
	if len(it.fixed) == 0 {
		return args, nil
	}
	args = bytes.TrimSpace(args)
	var inner []byte
	if len(args) > 0 {
		if err := it.refuseFixed(args); err != nil {
			return nil, err
		}
		inner = bytes.TrimSpace(args[1 : len(args)-1]) // the members, without braces
	}
	out := make([]byte, 0, len(args)+it.fixedSize())
	out = append(out, '{')
	for i, name := range it.fixedNames {
		if i > 0 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, name)
		out = append(out, ':')
		out = append(out, it.fixed[name]...)
	}
	if len(inner) > 0 {
		out = append(out, ',')
		out = append(out, inner...)
	}
	return append(out, '}'), nil
}

func (it *Item) fixedSize() int {
	n := 2
	for name, v := range it.fixed {
		n += len(name) + len(v) + 4
	}
	return n
}

// refuseFixed fails when the object args has a member the item fixes,
// or is not one JSON object (the server validated it as it read the
// request: this is for other callers).
func (it *Item) refuseFixed(args jsontext.Value) error {
	notObject := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: arguments must be a JSON object")
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return notObject
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return notObject
		}
		if name := tok.String(); it.fixed[name] != nil {
			return fixedError(it.Name, name)
		}
		if err := dec.SkipValue(); err != nil {
			return notObject
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return notObject
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return notObject
	}
	return nil
}

// Settable refuses, with -32602 naming it, an argument the view fixes:
// for a completion of it, which a client of the view has no business
// asking for.
func (it *Item) Settable(arg string) error {
	if it.fixed[arg] != nil {
		return fixedError(it.Name, arg)
	}
	return nil
}

// PromptArguments returns the arguments of a prompts/get of the prompt:
// args, the client's, with the fixed arguments added, in a map of its
// own. A client that sends one of them gets -32602 naming it.
func (it *Item) PromptArguments(args map[string]string) (map[string]string, error) {
	if len(it.fixed) == 0 {
		return args, nil
	}
	for _, name := range it.fixedNames {
		if _, sent := args[name]; sent {
			return nil, fixedError(it.Name, name)
		}
	}
	out := make(map[string]string, len(args)+len(it.fixed))
	maps.Copy(out, args)
	for name, v := range it.fixed {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "view prompt %q: fixed argument %q is not a string", it.Name, name)
		}
		out[name] = s
	}
	return out, nil
}

// hideProperties returns an object schema without the properties named
// in fixed, neither among its "properties" nor its "required"; other
// members are kept as they are. A schema it cannot read is returned as
// it is.
func hideProperties(schema jsontext.Value, fixed map[string]jsontext.Value) jsontext.Value {
	var members []struct {
		name  string
		value jsontext.Value
	}
	dec := jsontext.NewDecoder(bytes.NewReader(schema))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return schema
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return schema
		}
		name := tok.String() // before the next read voids tok
		v, err := dec.ReadValue()
		if err != nil {
			return schema
		}
		switch name {
		case "properties":
			v = withoutMembers(v, fixed)
		case "required":
			v = withoutStrings(v, fixed)
		default:
			v = slices.Clone(v)
		}
		members = append(members, struct {
			name  string
			value jsontext.Value
		}{name, v})
	}
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out, _ = jsontext.AppendQuote(out, m.name)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}')
}

// withoutMembers returns the object obj without the members named in drop.
func withoutMembers(obj jsontext.Value, drop map[string]jsontext.Value) jsontext.Value {
	var m map[string]jsontext.Value
	if json.Unmarshal(obj, &m) != nil {
		return slices.Clone(obj)
	}
	for name := range drop {
		delete(m, name)
	}
	out, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return slices.Clone(obj)
	}
	return out
}

// withoutStrings returns the array of strings arr without those named
// in drop.
func withoutStrings(arr jsontext.Value, drop map[string]jsontext.Value) jsontext.Value {
	var names []string
	if json.Unmarshal(arr, &names) != nil {
		return slices.Clone(arr)
	}
	names = slices.DeleteFunc(names, func(n string) bool { _, ok := drop[n]; return ok })
	out, _ := json.Marshal(names)
	return out
}
