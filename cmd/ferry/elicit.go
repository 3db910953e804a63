package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// field is one property of an elicitation form (the spec's
// PrimitiveSchemaDefinition: a string, number, integer or boolean, a
// single-select enum, or a multi-select array of enum values).
type field struct {
	name, typ, title, description, format string
	// choices are the allowed values of an enum (single-select), or of
	// the items of an array (multi-select), with their titles.
	choices []choice
	multi   bool // an array: several choices, sent as a JSON array
	// Bounds, nil when the schema sets none.
	minimum, maximum     *float64
	minLength, maxLength *int
	minItems, maxItems   *int
	def                  jsontext.Value
	required             bool
}

// choice is one value of an enum and the title shown for it.
type choice struct {
	value any // as the schema gives it (a string, most often)
	title string
}

func (c choice) valueText() string { return fmt.Sprint(c.value) }

// label is what the user sees: "Superman (hero-1)", or the value alone.
func (c choice) label() string {
	if c.title == "" || c.title == c.valueText() {
		return c.valueText()
	}
	return c.title + " (" + c.valueText() + ")"
}

// propDef is what a form reads of a property's schema.
type propDef struct {
	Type        string         `json:"type"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	Format      string         `json:"format"`
	Enum        []any          `json:"enum"`
	EnumNames   []string       `json:"enumNames"` // legacy titles of enum
	OneOf       []option       `json:"oneOf"`
	AnyOf       []option       `json:"anyOf"`
	Items       *propDef       `json:"items"`
	Minimum     *float64       `json:"minimum"`
	Maximum     *float64       `json:"maximum"`
	MinLength   *int           `json:"minLength"`
	MaxLength   *int           `json:"maxLength"`
	MinItems    *int           `json:"minItems"`
	MaxItems    *int           `json:"maxItems"`
	Default     jsontext.Value `json:"default"`
}

type option struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// choices returns the enum of a schema: enum (titled by enumNames), or
// oneOf/anyOf of {const, title}.
func (p *propDef) choices() []choice {
	var out []choice
	for i, e := range p.Enum {
		c := choice{value: e}
		if i < len(p.EnumNames) {
			c.title = p.EnumNames[i]
		}
		out = append(out, c)
	}
	for _, o := range append(slices.Clone(p.OneOf), p.AnyOf...) {
		if o.Const != nil {
			out = append(out, choice{value: o.Const, title: o.Title})
		}
	}
	return out
}

// formFields reads a requestedSchema's properties, in their order.
func formFields(schema jsontext.Value) ([]field, error) {
	var s struct {
		Properties jsontext.Value `json:"properties"`
		Required   []string       `json:"required"`
	}
	if len(schema) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	names, props, err := orderedMembers(s.Properties)
	if err != nil {
		return nil, err
	}
	var out []field
	for _, n := range names {
		var p propDef
		if err := json.Unmarshal(props[n], &p); err != nil {
			return nil, fmt.Errorf("property %q: %v", n, err)
		}
		f := field{name: n, typ: p.Type, title: p.Title, description: p.Description, format: p.Format,
			choices: p.choices(), minimum: p.Minimum, maximum: p.Maximum, minLength: p.MinLength, maxLength: p.MaxLength,
			minItems: p.MinItems, maxItems: p.MaxItems, def: p.Default, required: slices.Contains(s.Required, n)}
		if p.Type == "array" {
			f.multi = true
			if p.Items != nil {
				f.choices = p.Items.choices()
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// orderedMembers returns an object's member names in order and their
// values.
func orderedMembers(raw jsontext.Value) ([]string, map[string]jsontext.Value, error) {
	if len(raw) == 0 {
		return nil, nil, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, fmt.Errorf("not an object")
	}
	var names []string
	vals := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, err
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		vals[name] = bytes.Clone(v)
	}
	return names, vals, nil
}

// askForm asks the user a server's elicitation on the terminal, and
// shows what is sent back.
func askForm(w io.Writer, in *bufio.Reader, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	cancel := &protocol.ElicitResult{Action: protocol.ElicitCancel}
	fmt.Fprintf(w, "\nServer %q asks: %s\n", safe(server), safe(p.Message))
	if p.Mode == protocol.ElicitURL {
		fmt.Fprintf(w, "Open %s\n", safe(p.URL))
	}
	fmt.Fprint(w, "Answer? [Y]es, [n]o (decline), [c]ancel: ")
	line, err := readLine(in)
	if err != nil {
		fmt.Fprintln(w, "\nCancelled.")
		return cancel, nil
	}
	switch strings.ToLower(line) {
	case "n", "no":
		fmt.Fprintln(w, "Declined.")
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	case "c", "cancel":
		fmt.Fprintln(w, "Cancelled.")
		return cancel, nil
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("invalid requestedSchema: %v", err)
	}
	content := map[string]any{}
	for _, f := range fields {
		v, ok, err := f.ask(w, in)
		if err != nil {
			fmt.Fprintln(w, "\nCancelled.")
			return cancel, nil
		}
		if ok {
			content[f.name] = v
		}
	}
	sent, _ := json.Marshal(content, json.Deterministic(true))
	fmt.Fprintf(w, "Sent to %q: %s\n", safe(server), safe(string(sent)))
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
}

// ask asks one field until the answer fits its schema; ok is false for
// an optional field left empty.
func (f *field) ask(w io.Writer, in *bufio.Reader) (v any, ok bool, err error) {
	for i, c := range f.choices {
		fmt.Fprintf(w, "    %d) %s\n", i+1, safe(c.label()))
	}
	for {
		fmt.Fprint(w, "  "+f.prompt()+": ")
		line, err := readLine(in)
		if err != nil {
			return nil, false, err
		}
		if line == "" {
			if len(f.def) > 0 {
				var v any
				json.Unmarshal(f.def, &v)
				return v, true, nil
			}
			if !f.required {
				return nil, false, nil
			}
			fmt.Fprintln(w, "    (required)")
			continue
		}
		v, err := f.parse(line)
		if err != nil {
			fmt.Fprintf(w, "    %v\n", err)
			continue
		}
		return v, true, nil
	}
}

func (f *field) prompt() string {
	s := f.name
	if f.title != "" {
		s = f.title
	}
	if f.description != "" && f.description != f.title {
		s += " (" + f.description + ")"
	}
	s = safe(s)
	var hints []string
	switch {
	case f.multi && len(f.choices) > 0:
		hints = append(hints, "several: numbers or names, separated by commas")
	case f.multi:
		hints = append(hints, "a list, separated by commas")
	case len(f.choices) > 0:
		hints = append(hints, "a number or a name")
	case f.typ == "boolean":
		hints = append(hints, "y/n")
	case f.typ == "integer", f.typ == "number":
		hints = append(hints, f.typ)
	case f.format != "":
		hints = append(hints, f.format)
	}
	if r := rangeText(f.minimum, f.maximum); r != "" {
		hints = append(hints, r)
	}
	if r := countText(f.minLength, f.maxLength, "characters"); r != "" {
		hints = append(hints, r)
	}
	if r := countText(f.minItems, f.maxItems, "choices"); r != "" {
		hints = append(hints, r)
	}
	if len(hints) > 0 {
		s += " <" + strings.Join(hints, ", ") + ">"
	}
	if len(f.def) > 0 {
		s += " [" + safe(f.defaultText()) + "]"
	}
	if f.required {
		s += " *"
	}
	return s
}

// defaultText shows the default by its choices' titles.
func (f *field) defaultText() string {
	var v any
	if json.Unmarshal(f.def, &v) != nil {
		return string(f.def)
	}
	show := func(x any) string {
		for _, c := range f.choices {
			if c.valueText() == fmt.Sprint(x) && c.title != "" {
				return c.title
			}
		}
		if s, ok := x.(string); ok {
			return s
		}
		b, _ := json.Marshal(x)
		return string(b)
	}
	if list, ok := v.([]any); ok {
		var parts []string
		for _, x := range list {
			parts = append(parts, show(x))
		}
		return strings.Join(parts, ", ")
	}
	return show(v)
}

func rangeText(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return num(*lo) + " to " + num(*hi)
	case lo != nil:
		return "at least " + num(*lo)
	case hi != nil:
		return "at most " + num(*hi)
	}
	return ""
}

func countText(lo, hi *int, what string) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%d to %d %s", *lo, *hi, what)
	case lo != nil:
		return fmt.Sprintf("at least %d %s", *lo, what)
	case hi != nil:
		return fmt.Sprintf("at most %d %s", *hi, what)
	}
	return ""
}

// parse turns an answer into the value the schema asks for, or says
// what is wrong with it.
func (f *field) parse(s string) (any, error) {
	if f.multi {
		return f.parseList(s)
	}
	if len(f.choices) > 0 {
		c, err := f.pick(s)
		if err != nil {
			return nil, err
		}
		return c.value, nil
	}
	return f.parseScalar(s)
}

// parseList reads a multi-select answer: a JSON array, or items
// separated by commas, each a choice's number, value or title.
func (f *field) parseList(s string) (any, error) {
	var parts []string
	if strings.HasPrefix(s, "[") {
		var list []any
		if err := json.Unmarshal([]byte(s), &list); err != nil {
			return nil, fmt.Errorf("not a JSON array: %v", err)
		}
		for _, x := range list {
			parts = append(parts, fmt.Sprint(x))
		}
	} else {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
	}
	out := []any{}
	for _, p := range parts {
		var v any = p
		if len(f.choices) > 0 {
			c, err := f.pick(p)
			if err != nil {
				return nil, err
			}
			v = c.value
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if f.minItems != nil && len(out) < *f.minItems || f.maxItems != nil && len(out) > *f.maxItems {
		return nil, fmt.Errorf("choose %s", countText(f.minItems, f.maxItems, "of them"))
	}
	return out, nil
}

// pick finds the choice an answer names: by its number in the list, its
// value or its title (in any case; the exact value first).
func (f *field) pick(s string) (choice, error) {
	for _, c := range f.choices {
		if c.valueText() == s {
			return c, nil
		}
	}
	for _, c := range f.choices {
		if strings.EqualFold(c.valueText(), s) || c.title != "" && strings.EqualFold(c.title, s) {
			return c, nil
		}
	}
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.choices) {
		return f.choices[i-1], nil
	}
	var names []string
	for _, c := range f.choices {
		names = append(names, c.label())
	}
	return choice{}, fmt.Errorf("%q is not one of the choices: %s (or their numbers)", safe(s), safe(strings.Join(names, ", ")))
}

func (f *field) parseScalar(s string) (any, error) {
	switch f.typ {
	case "number", "integer":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("a number, please")
		}
		if f.typ == "integer" && v != float64(int64(v)) {
			return nil, fmt.Errorf("a whole number, please")
		}
		if f.minimum != nil && v < *f.minimum || f.maximum != nil && v > *f.maximum {
			return nil, fmt.Errorf("a number %s, please", rangeText(f.minimum, f.maximum))
		}
		if f.typ == "integer" {
			return int64(v), nil
		}
		return v, nil
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("y or n, please")
	}
	n := len([]rune(s))
	if f.minLength != nil && n < *f.minLength || f.maxLength != nil && n > *f.maxLength {
		return nil, fmt.Errorf("%s, please", countText(f.minLength, f.maxLength, "characters"))
	}
	if err := checkFormat(f.format, s); err != nil {
		return nil, err
	}
	return s, nil
}

// checkFormat checks the formats the spec names for strings.
func checkFormat(format, s string) error {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return fmt.Errorf("an email address such as name@example.com, please")
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
			return fmt.Errorf("a URI with a scheme, such as https://example.com, please")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return fmt.Errorf("a date as YYYY-MM-DD, please")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("a date and time as 2006-01-02T15:04:05Z, please")
		}
	}
	return nil
}

func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
