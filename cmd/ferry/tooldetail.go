package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// cmdToolDetail is "ferry tools SERVER TOOL" (or SERVER.TOOL): one tool
// in full.
func cmdToolDetail(ctx context.Context, o *cli, servers []*config.Server) error {
	srvName, toolName, ok := o.args[0], "", true
	if len(o.args) == 2 {
		toolName = o.args[1]
	} else {
		srvName, toolName, ok = splitTarget(o.args[0], o.separator, servers)
		if !ok {
			return usageErrorf("no server named in %q (configured: %s)", o.args[0], serverNames(servers))
		}
	}
	sess, err := o.startServers(ctx, servers, srvName)
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.startErr != nil {
		return sess.startErr
	}
	srv, err := sess.Server(srvName)
	if err != nil {
		return err
	}
	tools, err := srv.Tools(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(t protocol.Tool) bool { return t.Name == toolName })
	if i < 0 {
		var have []string
		for _, t := range tools {
			have = append(have, t.Name)
		}
		return &host.Error{Server: srvName, Kind: host.KindUnknown,
			Err: fmt.Errorf("no tool named %q (tools: %s)", toolName, strings.Join(have, ", "))}
	}
	t := tools[i]
	if o.json {
		return o.printJSON(toolOut{Server: srvName, QualifiedName: srvName + o.separator + t.Name, Tool: t})
	}
	o.writeToolDetail(srvName, &t)
	return nil
}

// writeToolDetail shows a tool for people.
func (o *cli) writeToolDetail(server string, t *protocol.Tool) {
	w := o.stdout
	head := o.toolName(server, t.Name)
	if t.Title != "" {
		head += " (" + t.Title + ")"
	}
	fmt.Fprintln(w, safeLine(head))
	if t.Description != "" {
		fmt.Fprintf(w, "\n%s\n", indent(safe(strings.TrimSpace(t.Description)), "  "))
	}
	if rows := argumentRows(t.InputSchema); len(rows) > 0 {
		fmt.Fprintln(w, "\nArguments (* required):")
		writeColumns(w, rows)
	} else {
		fmt.Fprintln(w, "\nNo arguments.")
	}
	if t.Annotations != nil {
		b, _ := json.Marshal(t.Annotations, json.Deterministic(true))
		fmt.Fprintf(w, "\nAnnotations: %s\n", safe(string(b)))
	}
	for _, s := range []struct {
		name   string
		schema jsontext.Value
	}{{"Input schema", t.InputSchema}, {"Output schema", t.OutputSchema}} {
		if len(s.schema) == 0 {
			continue
		}
		v := jsontext.Value(slices.Clone(s.schema))
		if v.Indent(jsontext.WithIndent("  ")) == nil {
			fmt.Fprintf(w, "\n%s:\n%s\n", s.name, indent(safe(string(v)), "  "))
		}
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// argSchema is what the detail view shows of a property's schema.
type argSchema struct {
	Type        jsontext.Value `json:"type"`
	Description string         `json:"description"`
	Enum        []any          `json:"enum"`
	Const       any            `json:"const"`
	Default     jsontext.Value `json:"default"`
	Format      string         `json:"format"`
	Minimum     *float64       `json:"minimum"`
	Maximum     *float64       `json:"maximum"`
	MinLength   *int           `json:"minLength"`
	MaxLength   *int           `json:"maxLength"`
	MinItems    *int           `json:"minItems"`
	MaxItems    *int           `json:"maxItems"`
	Items       *argSchema     `json:"items"`
	OneOf       []argSchema    `json:"oneOf"`
	AnyOf       []argSchema    `json:"anyOf"`
	Properties  jsontext.Value `json:"properties"`
}

// argumentRows renders each top-level property as "name*" and its
// type, constraints and description.
func argumentRows(schema jsontext.Value) [][2]string {
	var s struct {
		Properties jsontext.Value `json:"properties"`
		Required   []string       `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names, props, _ := orderedMembers(s.Properties)
	var rows [][2]string
	for _, n := range names {
		var p argSchema
		json.Unmarshal(props[n], &p)
		name := n
		if slices.Contains(s.Required, n) {
			name += "*"
		}
		text := p.typeText()
		if p.Description != "" {
			text += ": " + p.Description
		}
		rows = append(rows, [2]string{safeLine(name), safeLine(text)})
	}
	return rows
}

// typeText is "integer, 1 to 100, default 5", "array of string, one of
// a|b", "object with x, y".
func (p *argSchema) typeText() string {
	var types []string
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		types = []string{one}
	} else {
		json.Unmarshal(p.Type, &types)
	}
	t := strings.Join(types, " or ")
	if t == "array" && p.Items != nil {
		t = "array of " + p.Items.typeText()
	}
	if t == "object" && len(p.Properties) > 0 {
		names, _, _ := orderedMembers(p.Properties)
		t += " with " + strings.Join(names, ", ")
	}
	if t == "" {
		t = "any"
	}
	parts := []string{t}
	if len(p.Enum) > 0 {
		parts = append(parts, "one of "+joinJSON(p.Enum))
	}
	var consts []any
	for _, o := range append(slices.Clone(p.OneOf), p.AnyOf...) {
		if o.Const != nil {
			consts = append(consts, o.Const)
		}
	}
	if len(consts) > 0 {
		parts = append(parts, "one of "+joinJSON(consts))
	}
	if p.Format != "" {
		parts = append(parts, p.Format)
	}
	for _, r := range []string{rangeText(p.Minimum, p.Maximum), countText(p.MinLength, p.MaxLength, "characters"), countText(p.MinItems, p.MaxItems, "items")} {
		if r != "" {
			parts = append(parts, r)
		}
	}
	if len(p.Default) > 0 {
		parts = append(parts, "default "+string(p.Default))
	}
	return strings.Join(parts, ", ")
}

func joinJSON(vals []any) string {
	var out []string
	for _, v := range vals {
		if s, ok := v.(string); ok {
			out = append(out, s)
			continue
		}
		b, _ := json.Marshal(v)
		out = append(out, string(b))
	}
	return strings.Join(out, "|")
}
