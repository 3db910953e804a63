package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// propSchema is what coercion needs of a property's schema.
type propSchema struct {
	Type  jsontext.Value `json:"type"` // a string or an array of strings
	Items *propSchema    `json:"items"`
	Enum  []any          `json:"enum"`
}

func (p *propSchema) types() []string {
	if p == nil || len(p.Type) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		return []string{one}
	}
	var many []string
	json.Unmarshal(p.Type, &many)
	return many
}

// toolArguments builds a call's arguments: the --args object (JSON, - for
// stdin, @FILE), then each k=v coerced by the input schema (k:=JSON
// takes the value as JSON).
func toolArguments(schema jsontext.Value, argsFlag string, stdin io.Reader, pairs []string) (jsontext.Value, error) {
	args := map[string]jsontext.Value{}
	if argsFlag != "" {
		raw := []byte(argsFlag)
		switch {
		case argsFlag == "-":
			b, err := io.ReadAll(stdin)
			if err != nil {
				return nil, usageErrorf("--args -: reading stdin: %v", err)
			}
			raw = b
		case strings.HasPrefix(argsFlag, "@"):
			b, err := os.ReadFile(argsFlag[1:])
			if err != nil {
				return nil, usageErrorf("--args: %v", err)
			}
			raw = b
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &args); err != nil {
				return nil, usageErrorf("--args: not a JSON object: %v", err)
			}
		}
	}
	var s struct {
		Properties map[string]*propSchema `json:"properties"`
		Required   []string               `json:"required"`
	}
	json.Unmarshal(schema, &s)
	for _, kv := range pairs {
		if k, v, ok := strings.Cut(kv, ":="); ok && !strings.Contains(k, "=") {
			if !validJSON(v) {
				return nil, usageErrorf("argument %s: %q is not valid JSON", k, v)
			}
			args[k] = jsontext.Value(v)
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageErrorf("argument %q: want NAME=VALUE (or NAME:=JSON)", kv)
		}
		val, err := coerce(v, s.Properties[k])
		if err != nil {
			return nil, usageErrorf("argument %s: %v", k, err)
		}
		args[k] = val
	}
	if err := checkArguments(args, s.Properties, s.Required); err != nil {
		return nil, err
	}
	out, err := json.Marshal(args, json.Deterministic(true))
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkArguments checks before sending what the schema at hand says
// plainly: every required argument is given, and a value of an enum (or
// each item of an array of one) is among its values. The server checks
// the rest.
func checkArguments(args map[string]jsontext.Value, props map[string]*propSchema, required []string) error {
	var missing []string
	for _, r := range required {
		if _, ok := args[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		what := "argument"
		if len(missing) > 1 {
			what += "s"
		}
		return usageErrorf("missing required %s %s", what, strings.Join(missing, ", "))
	}
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		p := props[k]
		if p == nil {
			continue
		}
		if err := checkEnum(k, args[k], p); err != nil {
			return err
		}
		if p.Items != nil && len(p.Items.Enum) > 0 {
			var items []jsontext.Value
			if json.Unmarshal(args[k], &items) == nil {
				for _, it := range items {
					if err := checkEnum(k, it, p.Items); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// checkEnum reports a value outside the property's enum.
func checkEnum(name string, v jsontext.Value, p *propSchema) error {
	if len(p.Enum) == 0 {
		return nil
	}
	var got any
	if json.Unmarshal(v, &got) != nil {
		return nil
	}
	var allowed []string
	for _, e := range p.Enum {
		if reflect.DeepEqual(e, got) {
			return nil
		}
		b, _ := json.Marshal(e)
		allowed = append(allowed, string(b))
	}
	return usageErrorf("argument %s: %s is not one of %s", name, v, strings.Join(allowed, ", "))
}

// coerce turns a command-line value into JSON as the property's schema
// says: numbers, integers, booleans, null, arrays (JSON, or items
// separated by commas) and objects (JSON); strings stay strings. Without
// a type, a value that reads as JSON is taken as such.
func coerce(v string, p *propSchema) (jsontext.Value, error) {
	types := p.types()
	str := func() jsontext.Value { b, _ := jsontext.AppendQuote(nil, v); return b }
	if len(types) == 0 {
		if v != "" && validJSON(v) && !strings.HasPrefix(v, `"`) {
			return jsontext.Value(v), nil
		}
		return str(), nil
	}
	if slices.Contains(types, "string") {
		return str(), nil
	}
	var errs []string
	for _, t := range types {
		switch t {
		case "integer":
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return jsontext.Value(v), nil
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil && f == float64(int64(f)) {
				return jsontext.Value(strconv.FormatInt(int64(f), 10)), nil
			}
			errs = append(errs, "an integer")
		case "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				if validJSON(v) {
					return jsontext.Value(v), nil // as written: 1e3, 0.10
				}
				return jsontext.Value(strconv.FormatFloat(f, 'g', -1, 64)), nil // .5, +1
			}
			errs = append(errs, "a number")
		case "boolean":
			if b, err := strconv.ParseBool(v); err == nil {
				return jsontext.Value(strconv.FormatBool(b)), nil
			}
			errs = append(errs, "true or false")
		case "null":
			if v == "null" || v == "" {
				return jsontext.Value("null"), nil
			}
			errs = append(errs, "null")
		case "array":
			if strings.HasPrefix(strings.TrimSpace(v), "[") && validJSON(v) {
				return jsontext.Value(v), nil
			}
			var items []jsontext.Value
			if v != "" {
				for _, part := range strings.Split(v, ",") {
					it, err := coerce(strings.TrimSpace(part), p.Items)
					if err != nil {
						return nil, fmt.Errorf("item %q: %v", part, err)
					}
					items = append(items, it)
				}
			}
			b, _ := json.Marshal(items)
			if items == nil {
				b = []byte("[]")
			}
			return b, nil
		case "object":
			if strings.HasPrefix(strings.TrimSpace(v), "{") && validJSON(v) {
				return jsontext.Value(v), nil
			}
			errs = append(errs, "a JSON object")
		}
	}
	if len(errs) == 0 {
		return str(), nil
	}
	return nil, fmt.Errorf("%q is not %s", v, strings.Join(errs, " or "))
}

// validJSON reports whether s is one JSON value.
func validJSON(s string) bool {
	return jsontext.Value(s).IsValid()
}
