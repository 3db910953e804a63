package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// field is one property of an elicitation form.
type field struct {
	name, typ, title, description string
	enum                          []string
	def                           jsontext.Value
	required                      bool
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
		var p struct {
			Type        string `json:"type"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			OneOf       []struct {
				Const any `json:"const"`
			} `json:"oneOf"`
			Default jsontext.Value `json:"default"`
		}
		json.Unmarshal(props[n], &p)
		f := field{name: n, typ: p.Type, title: p.Title, description: p.Description, def: p.Default, required: slices.Contains(s.Required, n)}
		for _, e := range p.Enum {
			f.enum = append(f.enum, fmt.Sprint(e))
		}
		for _, o := range p.OneOf {
			f.enum = append(f.enum, fmt.Sprint(o.Const))
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

// askForm asks the user a server's elicitation on the terminal.
func askForm(w io.Writer, in *bufio.Reader, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	cancel := &protocol.ElicitResult{Action: protocol.ElicitCancel}
	fmt.Fprintf(w, "\nServer %q asks: %s\n", server, p.Message)
	if p.Mode == protocol.ElicitURL {
		fmt.Fprintf(w, "Open %s\n", p.URL)
	}
	fmt.Fprint(w, "Answer? [Y]es, [n]o (decline), [c]ancel: ")
	line, err := readLine(in)
	if err != nil {
		return cancel, nil
	}
	switch strings.ToLower(line) {
	case "n", "no":
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	case "c", "cancel":
		return cancel, nil
	}
	fields, err := formFields(p.RequestedSchema)
	if err != nil {
		return nil, fmt.Errorf("invalid requestedSchema: %v", err)
	}
	content := map[string]any{}
	for _, f := range fields {
		for {
			fmt.Fprint(w, "  "+f.prompt()+": ")
			line, err := readLine(in)
			if err != nil {
				return cancel, nil
			}
			if line == "" {
				if len(f.def) > 0 {
					var v any
					json.Unmarshal(f.def, &v)
					content[f.name] = v
					break
				}
				if !f.required {
					break
				}
				fmt.Fprintln(w, "  (required)")
				continue
			}
			v, err := f.parse(line)
			if err != nil {
				fmt.Fprintf(w, "  %v\n", err)
				continue
			}
			content[f.name] = v
			break
		}
	}
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: content}, nil
}

func (f *field) prompt() string {
	s := f.name
	if f.title != "" {
		s = f.title
	}
	if f.description != "" && f.description != f.title {
		s += " (" + f.description + ")"
	}
	switch {
	case len(f.enum) > 0:
		s += " {" + strings.Join(f.enum, "|") + "}"
	case f.typ == "boolean":
		s += " [y/n]"
	case f.typ != "" && f.typ != "string":
		s += " <" + f.typ + ">"
	}
	if len(f.def) > 0 {
		s += " [" + string(f.def) + "]"
	}
	if f.required {
		s += " *"
	}
	return s
}

func (f *field) parse(s string) (any, error) {
	if len(f.enum) > 0 && !slices.Contains(f.enum, s) {
		if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.enum) {
			s = f.enum[i-1]
		} else {
			return nil, fmt.Errorf("one of %s", strings.Join(f.enum, ", "))
		}
	}
	switch f.typ {
	case "number":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("a number, please")
		}
		return v, nil
	case "integer":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("a whole number, please")
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
	return s, nil
}

func readLine(in *bufio.Reader) (string, error) {
	line, err := in.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
