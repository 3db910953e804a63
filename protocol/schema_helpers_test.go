package protocol

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// This file holds the machinery of the schema tests: loading each
// revision's schema.json from testdata/spec, compiling its definitions
// (as published, and "closed"), and listing the JSON members of Go types.

// allRevisions lists the revisions whose schema the tests load, oldest
// first.
var allRevisions = []string{Version20241105, Version20250326, Version20250618, Version20251125, Version20260728}

// specSchema is one revision's schema.json.
type specSchema struct {
	rev     string
	doc     map[string]any // the decoded schema (numbers as json.Number)
	defsKey string         // "definitions" (draft-07) or "$defs" (2020-12)
	defs    map[string]any

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]compiled
}

type compiled struct {
	sch *jsonschema.Schema
	err error
}

const (
	openURL   = "file:///spec/%s/schema.json"
	closedURL = "file:///spec/%s/closed.json"
)

var (
	schemasOnce sync.Once
	schemas     map[string]*specSchema
	schemasErr  error
)

// loadSchemas loads the schema of every revision once per test binary.
func loadSchemas(t testing.TB) map[string]*specSchema {
	t.Helper()
	schemasOnce.Do(func() {
		schemas = make(map[string]*specSchema)
		for _, rev := range allRevisions {
			s, err := loadSchema(rev)
			if err != nil {
				schemasErr = err
				return
			}
			schemas[rev] = s
		}
	})
	if schemasErr != nil {
		t.Fatal(schemasErr)
	}
	return schemas
}

func loadSchema(rev string) (*specSchema, error) {
	raw, err := os.ReadFile(filepath.Join("testdata", "spec", rev, "schema.json"))
	if err != nil {
		return nil, err
	}
	doc, err := decodeInstance(raw)
	if err != nil {
		return nil, fmt.Errorf("%s schema: %w", rev, err)
	}
	s := &specSchema{rev: rev, doc: doc.(map[string]any), compiled: make(map[string]compiled)}
	for _, k := range []string{"definitions", "$defs"} {
		if d, ok := s.doc[k].(map[string]any); ok {
			s.defsKey, s.defs = k, d
		}
	}
	if s.defs == nil {
		return nil, fmt.Errorf("%s schema: no definitions", rev)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	// "byte" is the OpenAPI format of base64 data (image, audio, blob).
	c.RegisterFormat(&jsonschema.Format{Name: "byte", Validate: func(v any) error {
		if s, ok := v.(string); ok {
			_, err := base64.StdEncoding.DecodeString(s)
			return err
		}
		return nil
	}})
	if err := c.AddResource(fmt.Sprintf(openURL, rev), s.doc); err != nil {
		return nil, err
	}
	if err := c.AddResource(fmt.Sprintf(closedURL, rev), closeSchema(s)); err != nil {
		return nil, err
	}
	s.compiler = c
	return s, nil
}

// decodeInstance decodes JSON the way the validator wants it (numbers as
// json.Number).
func decodeInstance(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// def returns the named definition, or nil.
func (s *specSchema) def(name string) map[string]any {
	d, _ := s.defs[name].(map[string]any)
	return d
}

// defNames returns the definition names, sorted.
func (s *specSchema) defNames() []string {
	names := make([]string, 0, len(s.defs))
	for n := range s.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// schemaFor compiles (once) the schema at ptr, a JSON pointer into the
// document such as "/$defs/CallToolRequest"; closed selects the closed
// variant (see [closeSchema]).
func (s *specSchema) schemaFor(ptr string, closed bool) (*jsonschema.Schema, error) {
	url := fmt.Sprintf(openURL, s.rev)
	if closed {
		url = fmt.Sprintf(closedURL, s.rev)
	}
	loc := url + "#" + ptr
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.compiled[loc]
	if !ok {
		c.sch, c.err = s.compiler.Compile(loc)
		s.compiled[loc] = c
	}
	return c.sch, c.err
}

// defPtr is the JSON pointer of a definition.
func (s *specSchema) defPtr(name string) string { return "/" + s.defsKey + "/" + name }

// validate validates the JSON text b against the named definition.
func (s *specSchema) validate(name string, b []byte, closed bool) error {
	return s.validatePtr(s.defPtr(name), b, closed)
}

func (s *specSchema) validatePtr(ptr string, b []byte, closed bool) error {
	sch, err := s.schemaFor(ptr, closed)
	if err != nil {
		return err
	}
	inst, err := decodeInstance(b)
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// resolve follows a local $ref ("#/definitions/X" or "#/$defs/X").
func (s *specSchema) resolve(node map[string]any) (map[string]any, string) {
	for i := 0; i < 16; i++ {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node, ""
		}
		name := refName(ref)
		next := s.def(name)
		if next == nil {
			return node, ""
		}
		if _, more := next["$ref"]; !more {
			return next, name
		}
		node = next
	}
	return node, ""
}

// refName is the definition name a local $ref points to.
func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

// propsOf returns the properties an object schema declares, following
// $ref and merging the members of allOf, anyOf and oneOf.
func (s *specSchema) propsOf(node map[string]any) map[string]map[string]any {
	props := make(map[string]map[string]any)
	var walk func(n map[string]any, depth int)
	walk = func(n map[string]any, depth int) {
		if n == nil || depth > 8 {
			return
		}
		n, _ = s.resolve(n)
		if p, ok := n["properties"].(map[string]any); ok {
			for k, v := range p {
				if _, seen := props[k]; !seen {
					vm, _ := v.(map[string]any)
					props[k] = vm
				}
			}
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			list, _ := n[kw].([]any)
			for _, m := range list {
				if mm, ok := m.(map[string]any); ok {
					walk(mm, depth+1)
				}
			}
		}
	}
	walk(node, 0)
	return props
}

// required returns the required members of an object schema (following
// $ref and allOf).
func (s *specSchema) required(node map[string]any) []string {
	node, _ = s.resolve(node)
	var req []string
	for _, r := range asList(node["required"]) {
		req = append(req, r.(string))
	}
	for _, m := range asList(node["allOf"]) {
		req = append(req, s.required(m.(map[string]any))...)
	}
	return req
}

func asList(v any) []any { l, _ := v.([]any); return l }

// isEnvelope reports whether a definition describes a whole JSON-RPC
// message (it declares "jsonrpc"), as from 2025-11-25; before, request and
// notification definitions describe only method and params.
func (s *specSchema) isEnvelope(name string) bool {
	_, ok := s.propsOf(s.def(name))["jsonrpc"]
	return ok
}

// unionMembers returns the definitions an anyOf definition lists.
func (s *specSchema) unionMembers(name string) []string {
	var out []string
	for _, m := range asList(s.def(name)["anyOf"]) {
		if ref, ok := m.(map[string]any)["$ref"].(string); ok {
			out = append(out, refName(ref))
		}
	}
	return out
}

// closeSchema returns a copy of the schema in which every object schema
// that declares properties but says nothing of others rejects members it
// does not declare (additionalProperties: false), and allOf compositions
// of object schemas are merged first so that closing them stays correct.
//
// The published schemas never close an object, so a sample carrying a
// member its revision does not know (say, resultType in a 2024-11-05
// result) would pass them; the closed variant catches it. Left open:
// everything under _meta (open by definition), under inputSchema and
// outputSchema (JSON Schemas), the *MetaObject definitions, and objects
// the schema itself opens (additionalProperties present).
//
// The inline params of legacy request definitions lost the
// params._meta member of their base Request when the schema was
// generated (every request may carry _meta.progressToken, as
// Request.params declares), so inline params objects accept _meta.
func closeSchema(s *specSchema) map[string]any {
	cp := deepCopy(s.doc).(map[string]any)
	defs := cp[s.defsKey].(map[string]any)
	for name, d := range defs {
		if strings.HasSuffix(name, "MetaObject") {
			continue
		}
		closeNode(s, d.(map[string]any), "")
	}
	return cp
}

func closeNode(s *specSchema, n map[string]any, member string) {
	switch member {
	case "_meta", "inputSchema", "outputSchema":
		return
	}
	if all, ok := n["allOf"].([]any); ok && allObjects(s, all) {
		mergeAllOf(s, n, all)
	}
	if props, ok := n["properties"].(map[string]any); ok {
		if _, has := n["additionalProperties"]; !has {
			n["additionalProperties"] = false
			if member == "params" {
				if _, has := props["_meta"]; !has {
					props["_meta"] = map[string]any{"type": "object"}
				}
			}
		}
		for k, v := range props {
			if vm, ok := v.(map[string]any); ok {
				closeNode(s, vm, k)
			}
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		for _, m := range asList(n[kw]) {
			if mm, ok := m.(map[string]any); ok {
				closeNode(s, mm, member)
			}
		}
	}
	for _, kw := range []string{"items", "additionalProperties"} {
		if mm, ok := n[kw].(map[string]any); ok {
			closeNode(s, mm, "")
		}
	}
}

// mergeAllOf replaces allOf by one object schema holding the properties
// and requirements of every member (members that are $refs are copied
// from the original document). A member open to other properties keeps
// the merge open.
func mergeAllOf(s *specSchema, n map[string]any, all []any) {
	props := map[string]any{}
	var req []any
	open := false
	for _, m := range all {
		mm, _ := s.resolve(m.(map[string]any))
		mm = deepCopy(mm).(map[string]any)
		if _, ok := mm["allOf"]; ok {
			return // nested compositions: leave as published
		}
		if _, ok := mm["additionalProperties"]; ok {
			open = true
		}
		for k, v := range asMap(mm["properties"]) {
			if prev, dup := props[k]; dup {
				props[k] = map[string]any{"allOf": []any{prev, v}}
			} else {
				props[k] = v
			}
		}
		for _, r := range asList(mm["required"]) {
			if !slices.Contains(req, r) {
				req = append(req, r)
			}
		}
	}
	delete(n, "allOf")
	n["type"] = "object"
	n["properties"] = props
	if len(req) > 0 {
		n["required"] = req
	}
	if open {
		n["additionalProperties"] = map[string]any{}
	}
	// The merged property schemas may be allOfs themselves.
	for _, v := range props {
		if vm, ok := v.(map[string]any); ok {
			if inner, ok := vm["allOf"].([]any); ok && allObjects(s, inner) {
				mergeAllOf(s, vm, inner)
			}
		}
	}
}

func allObjects(s *specSchema, list []any) bool {
	for _, m := range list {
		mm, _ := s.resolve(m.(map[string]any))
		if _, ok := mm["properties"]; !ok && len(mm) > 0 {
			return false
		}
	}
	return true
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			l[i] = deepCopy(x)
		}
		return l
	default:
		return v
	}
}

// goField is one JSON member of a Go struct type.
type goField struct {
	name string       // the JSON member name
	typ  reflect.Type // the Go type of the field
}

// jsonFields lists the JSON members of struct type t as json v2 sees them:
// names from the json tag (or the Go name), embedded structs without a
// JSON name inlined, "-" skipped. Shallower fields win, as in json v2.
func jsonFields(t reflect.Type) map[string]goField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	out := make(map[string]goField)
	if t.Kind() != reflect.Struct {
		return out
	}
	current := []reflect.Type{t}
	for depth := 0; len(current) > 0 && depth < 8; depth++ {
		var next []reflect.Type
		found := make(map[string]goField)
		for _, st := range current {
			for i := 0; i < st.NumField(); i++ {
				f := st.Field(i)
				if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if (f.Anonymous && name == "" && ft.Kind() == reflect.Struct) || strings.Contains(opts, "inline") || strings.Contains(opts, "embed") {
					next = append(next, ft)
					continue
				}
				if name == "" {
					name = f.Name
				}
				if _, shallower := out[name]; !shallower {
					found[name] = goField{name: name, typ: f.Type}
				}
			}
		}
		for k, v := range found {
			out[k] = v
		}
		current = next
	}
	return out
}

// baseStruct returns the struct type a field's values hold (through
// pointers, slices and arrays), or nil.
func baseStruct(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array:
			t = t.Elem()
		case reflect.Struct:
			if t == reflect.TypeFor[jsontext.Value]() {
				return nil
			}
			return t
		default:
			return nil
		}
	}
}

// canonical returns the RFC 8785 form of JSON text, so that two texts can
// be compared whatever their member order.
func canonical(b []byte) (string, error) {
	v := jsontext.Value(bytes.Clone(b))
	if err := v.Canonicalize(); err != nil {
		return "", err
	}
	return string(v), nil
}

// marshal marshals v with json v2 or fails the test.
func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return b
}

// sortedKeys returns the keys of a set, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
