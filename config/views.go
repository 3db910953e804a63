package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// View is one member of the top-level "views" object of ferry's gateway
// configuration: a curated set of the tools, prompts and resources of the
// gateway's servers, served as a server of its own (ferry serve's
// /views/NAME/mcp). [ReadViews] reads them.
//
//	"views": {
//	  "support": {
//	    "tools": {
//	      "github__search_issues": {"name": "search", "title": "Search tickets", "description": "Search our tickets",
//	                                "fixed": {"repo": "acme/support"}},
//	      "slack__post_message": {}
//	    },
//	    "prompts": {"github__triage": {"fixed": {"team": "support"}}},
//	    "resources": {"file:///docs/faq.md": {"description": "The FAQ"},
//	                  "tickets://{id}": {}}
//	  }
//	}
type View struct {
	// Name is the view's key, the NAME of its endpoint.
	Name string
	// Tools and Prompts are named as the gateway's aggregated endpoint
	// names them (SERVER__TOOL); Resources by URI or URI template. Each
	// list is in the order of the file.
	Tools     []ViewItem
	Prompts   []ViewItem
	Resources []ViewItem
	// Source is the file the view comes from.
	Source string
}

// ViewItem is one tool, prompt or resource of a view.
type ViewItem struct {
	// From names the item as the aggregated endpoint does: SERVER__TOOL
	// for a tool or a prompt, the URI or URI template of a resource.
	From string
	// Name, Title and Description, when set, replace the item's own in
	// the view (a resource keeps its URI).
	Name        string
	Title       string
	Description string
	// Fixed are arguments of a tool or prompt that the view sets on every
	// call and hides from its clients (a prompt's are strings). A string
	// is interpolated as the servers' entries are (${VAR}). They may be
	// secrets: never written out.
	Fixed map[string]jsontext.Value `json:"-"`
}

// MaxViews bounds the views of one file, as MaxServers its servers (the
// section's bytes are bounded by MaxEntryBytes, its lists by MaxItems).
const MaxViews = MaxServers

// ReadViews reads the "views" of the first of files that has them, as
// [FirstSection] takes a section (and [Merge] the first definition of a
// server), in the order of the file. Strings are interpolated with vars,
// as the servers' entries are. The error is an [*Error] naming the JSON
// path of the first problem (views.NAME.tools.SERVER__TOOL.fixed): a
// gateway refuses a configuration with one, its views whole.
func ReadViews(files []*File, vars Vars) ([]*View, error) {
	for _, f := range files {
		raw, ok := f.Sections["views"]
		if !ok {
			continue
		}
		r := &viewReader{file: f.Path, vars: vars}
		views := r.views(raw)
		return views, r.err
	}
	return nil, nil
}

// viewReader reads the views of one file; err keeps the first problem.
type viewReader struct {
	file string
	vars Vars
	err  error
}

func (r *viewReader) fail(path []string, err error) {
	if r.err == nil {
		r.err = &Error{File: r.file, Key: viewPath(path), Err: err}
	}
}

// views reads the "views" object.
func (r *viewReader) views(raw jsontext.Value) []*View {
	ms, ok := r.object([]string{"views"}, raw, MaxViews)
	if !ok {
		return nil
	}
	out := make([]*View, 0, len(ms))
	for _, m := range ms {
		out = append(out, r.view(m.name, m.value))
	}
	return out
}

// viewPath writes a JSON path: views.NAME.tools["a.b"] (a member whose
// name is not a plain word is quoted).
func viewPath(path []string) string {
	s := ""
	for i, seg := range path {
		switch {
		case plainWord(seg) && i == 0:
			s = seg
		case plainWord(seg):
			s += "." + seg
		default:
			s += "[" + strconv.Quote(seg) + "]"
		}
	}
	return s
}

func plainWord(s string) bool { return s != "" && ValidViewName(s) && !slices.Contains([]byte(s), '.') }

// ValidViewName reports whether name may name a view: the characters of
// tool names (A-Z, a-z, 0-9, _, -, .), 1 to 128 of them, since it is a
// segment of the view's URL.
func ValidViewName(name string) bool {
	if name == "" || len(name) > 128 || name == "." || name == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// view reads one view.
func (r *viewReader) view(name string, raw jsontext.Value) *View {
	v := &View{Name: name, Source: r.file}
	at := []string{"views", name}
	if !ValidViewName(name) {
		r.fail(at, errors.New("a view's name is 1 to 128 of A-Z, a-z, 0-9, _, - and . (it is part of the view's URL)"))
		return v
	}
	r.read(v, at, raw)
	return v
}

// read reads a view's object.
func (r *viewReader) read(v *View, at []string, raw jsontext.Value) {
	ms, ok := r.object(at, raw, MaxItems)
	if !ok {
		return
	}
	for _, m := range ms {
		path := append(slices.Clip(at), m.name)
		switch m.name {
		case "tools":
			v.Tools = r.items(path, m.value, true)
		case "prompts":
			v.Prompts = r.items(path, m.value, true)
		case "resources":
			v.Resources = r.items(path, m.value, false)
		default:
			r.fail(path, errors.New(`unknown member: a view has "tools", "prompts" and "resources"`))
		}
	}
	r.clashes(append(slices.Clip(at), "tools"), v.Tools)
	r.clashes(append(slices.Clip(at), "prompts"), v.Prompts)
}

// object reads the members of an object at path.
func (r *viewReader) object(path []string, raw jsontext.Value, max int) ([]member, bool) {
	if raw.Kind() != '{' {
		r.fail(path, fmt.Errorf("must be an object, not %s", kindName(raw)))
		return nil, false
	}
	var ms []member
	seen := map[string]bool{}
	// Duplicates are refused here, by name, rather than by the decoder,
	// which would say neither the name nor where.
	dec := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowDuplicateNames(true))
	err := eachMember(dec, func(dec *jsontext.Decoder, name string) error {
		if len(ms) == max {
			return fmt.Errorf("more than %d members", max)
		}
		if seen[name] {
			return fmt.Errorf("%q is named twice", name)
		}
		seen[name] = true
		v, err := dec.ReadValue()
		ms = append(ms, member{name: name, value: slices.Clone(v)}) // valid until the next read
		return err
	})
	if err != nil {
		r.fail(path, err)
		return nil, false
	}
	return ms, true
}

// items reads the tools, prompts or resources of a view; named says
// whether they are named (tools, prompts), and so may have fixed
// arguments.
func (r *viewReader) items(at []string, raw jsontext.Value, named bool) []ViewItem {
	ms, ok := r.object(at, raw, MaxItems)
	if !ok {
		return nil
	}
	out := make([]ViewItem, 0, len(ms))
	for _, m := range ms {
		path := append(slices.Clip(at), m.name)
		if m.name == "" {
			r.fail(path, errors.New("names nothing"))
			continue
		}
		it := ViewItem{From: m.name}
		if m.value.Kind() != 'n' {
			r.item(path, m.value, named, &it)
		}
		out = append(out, it)
	}
	return out
}

// item reads one item's object: name, description, fixed.
func (r *viewReader) item(at []string, raw jsontext.Value, named bool, it *ViewItem) {
	ms, ok := r.object(at, raw, MaxItems)
	if !ok {
		return
	}
	for _, m := range ms {
		path := append(slices.Clip(at), m.name)
		switch {
		case m.name == "name":
			it.Name = r.str(path, m.value)
			if named && it.Name != "" && !ValidViewName(it.Name) {
				r.fail(path, errors.New("a name is 1 to 128 of A-Z, a-z, 0-9, dot, _ and -"))
			}
		case m.name == "title":
			it.Title = r.str(path, m.value)
		case m.name == "description":
			it.Description = r.str(path, m.value)
		case m.name == "fixed" && named:
			it.Fixed = r.fixed(path, m.value, at[len(at)-2] == "prompts")
		default:
			known := `"name", "title" and "description"`
			if named {
				known = `"name", "title", "description" and "fixed"`
			}
			r.fail(path, fmt.Errorf("unknown member: an item of %s has %s", at[len(at)-2], known))
		}
	}
}

// fixed reads an item's fixed arguments: any JSON value for a tool, a
// string for a prompt. Strings are interpolated; the values are never
// quoted in an error, since they may be secrets.
func (r *viewReader) fixed(at []string, raw jsontext.Value, prompt bool) map[string]jsontext.Value {
	ms, ok := r.object(at, raw, MaxItems)
	if !ok {
		return nil
	}
	out := make(map[string]jsontext.Value, len(ms))
	for _, m := range ms {
		path := append(slices.Clip(at), m.name)
		switch {
		case m.name == "":
			r.fail(path, errors.New("an argument's name is empty"))
		case prompt && m.value.Kind() != '"':
			r.fail(path, fmt.Errorf("a prompt's argument is a string, not %s", kindName(m.value)))
		case m.value.Kind() == '"':
			s := r.str(path, m.value)
			v, _ := jsontext.AppendQuote(nil, s)
			out[m.name] = v
		default:
			v := slices.Clone(m.value)
			v.Compact() // valid: the whole file was read as JSON
			out[m.name] = v
		}
	}
	return out
}

// str reads a string, interpolated.
func (r *viewReader) str(path []string, raw jsontext.Value) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		r.fail(path, fmt.Errorf("must be a string, not %s", kindName(raw)))
		return ""
	}
	v, err := r.vars.Expand(s)
	if err != nil {
		r.fail(path, err)
		return ""
	}
	return v
}

// clashes fails when two items would show under one name.
func (r *viewReader) clashes(at []string, items []ViewItem) {
	by := make(map[string]string, len(items))
	for _, it := range items {
		shown := it.Shown()
		if other, dup := by[shown]; dup {
			r.fail(at, fmt.Errorf("%q and %q are both named %q in the view", other, it.From, shown))
			return
		}
		by[shown] = it.From
	}
}

// Shown is the name the view shows the item under: its Name, else the
// name it has on the aggregated endpoint.
func (it *ViewItem) Shown() string {
	if it.Name != "" {
		return it.Name
	}
	return it.From
}
