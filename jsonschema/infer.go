package jsonschema

import (
	"cmp"
	"encoding"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// InferOptions adjusts [Infer]. The zero value (or nil) is the default.
type InferOptions struct {
	// TypeSchemas gives the schema of particular Go types instead of
	// inferring one; the schemas are copied, not shared. A type listed here
	// wins over its JSONSchema method.
	TypeSchemas map[reflect.Type]*Schema

	// AllowAdditionalProperties leaves the object schemas of structs open.
	// By default they have "additionalProperties": false, so that a tool
	// rejects arguments it does not know (typically a misspelt optional
	// argument) instead of silently ignoring them.
	AllowAdditionalProperties bool
}

// Schemer is implemented by types that know their own JSON Schema. [Infer]
// calls JSONSchema on the zero value of such a type (through a pointer when
// the method has a pointer receiver) instead of inferring a schema.
type Schemer interface {
	JSONSchema() *Schema
}

// For returns the JSON Schema of T; see [Infer].
func For[T any](opts *InferOptions) (*Schema, error) {
	return Infer(reflect.TypeFor[T](), opts)
}

type cacheKey struct {
	t    reflect.Type
	open bool
}

type cacheEntry struct {
	s   *Schema
	err error
}

var inferCache sync.Map // cacheKey → cacheEntry

// Infer returns the JSON Schema (2020-12, without "$schema") of Go type t,
// describing the JSON that json v2 marshals from t and unmarshals into t.
// If t is a pointer type, the schema is that of its element. Results for
// options without TypeSchemas are cached per type; every call returns a
// fresh copy that the caller may modify.
//
// # Types
//
//   - bool: "boolean"; strings: "string".
//   - Integers: "integer"; unsigned ones have "minimum": 0 and the 8, 16
//     and 32 bit ones their range as minimum and maximum.
//   - Floats: "number".
//   - Slices and arrays: "array" with "items" (arrays also have minItems =
//     maxItems = length), except []byte and [N]byte: "string" with
//     "contentEncoding": "base64".
//   - Maps with string, integer or encoding.TextMarshaler keys: "object"
//     with "additionalProperties" the schema of the values.
//   - Pointers: the schema of the element, allowing null too (json v2
//     marshals a nil pointer as null) except for struct fields with
//     omitempty or omitzero, which omit nil pointers.
//   - Interfaces, [jsontext.Value] and encoding/json.RawMessage: {} (any
//     value).
//   - time.Time: "string" with "format": "date-time" (or "date" for the
//     json v2 field option format:DateOnly, "number" for format:unix and
//     the like); time.Duration: "string", or "number" with a numeric json
//     format option. (json v2 honours format options only with
//     json.ExperimentalSupportFormatTag.)
//   - Types with a JSONSchema method ([Schemer]): its result. Other types
//     with their own JSON marshalling methods: {} (any value), or "string"
//     for encoding.TextMarshaler.
//   - Structs: see below. Channels, functions and complex numbers are an
//     error.
//
// A type that contains itself (through a pointer, slice or map) is
// described once under "$defs" and referred to with "$ref"; references to
// the type being inferred are "#".
//
// # Structs
//
// A struct is an "object" whose "properties" follow the json v2 rules, in
// the order of the Go fields: the member name comes from the `json` tag or
// else is the Go field name (matching is case-sensitive); fields tagged
// `json:"-"` and unexported fields are left out; embedded structs without
// a JSON name are inlined, with json v2's rules for conflicting names; an
// embedded fallback field (a map or jsontext.Value with the `embed` option)
// makes the object accept other members. The object has
// "additionalProperties": false unless [InferOptions].AllowAdditionalProperties
// is set or it has such a fallback field.
//
// A field is required unless its json tag has omitempty or omitzero, or
// its type is a pointer; the jsonschema tag options "required" and
// "optional" override this rule.
//
// # Tags
//
// `description:"..."` gives the field's description; the whole tag value
// is used, commas included.
//
// `jsonschema:"..."` is a comma-separated list of keyword=value items:
//
//	title=T               title
//	description=D         description (cannot contain commas: prefer the
//	                      description tag)
//	enum=a|b|c            allowed values, parsed as the field's type
//	default=V             default value, parsed as the field's type; an
//	                      annotation in the schema, which the server's
//	                      typed tools (server.AddTool) also apply: an
//	                      omitted argument reaches the handler as V
//	example=V             an example (may repeat), parsed as the field's type
//	minimum=N, maximum=N, exclusiveMinimum=N, exclusiveMaximum=N,
//	multipleOf=N          numeric bounds
//	minLength=N, maxLength=N
//	                      string length bounds, in Unicode code points
//	format=F              format annotation (such as email or uri)
//	minItems=N, maxItems=N, uniqueItems
//	                      array bounds
//	required, optional    override the required rule
//	deprecated, readOnly  annotations
//	pattern=RE            regular expression; it must come last, as it
//	                      takes the rest of the tag, commas included
//
// Values of fields that are neither strings, numbers nor booleans are JSON
// text. On an array field, the string and number keywords (enum, format,
// pattern, lengths, bounds) apply to the items. A malformed tag, or a
// keyword that does not fit the field's type, is an error naming the field.
func Infer(t reflect.Type, opts *InferOptions) (*Schema, error) {
	if t == nil {
		return nil, errors.New("jsonschema: Infer: nil type")
	}
	var o InferOptions
	if opts != nil {
		o = *opts
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	cacheable := len(o.TypeSchemas) == 0
	key := cacheKey{t, o.AllowAdditionalProperties}
	if cacheable {
		if e, ok := inferCache.Load(key); ok {
			e := e.(cacheEntry)
			return e.s.Clone(), e.err
		}
	}
	s, err := infer(t, o)
	if err != nil {
		err = fmt.Errorf("jsonschema: Infer(%v): %w", t, err)
		s = nil
	}
	if cacheable {
		inferCache.Store(key, cacheEntry{s, err})
	}
	return s.Clone(), err
}

// inferrer holds the state of one inference.
type inferrer struct {
	opts       InferOptions
	root       reflect.Type
	inProgress map[reflect.Type]bool
	recursive  map[reflect.Type]bool
	defNames   map[reflect.Type]string
	usedNames  map[string]bool
	defs       map[string]*Schema
}

func infer(t reflect.Type, opts InferOptions) (*Schema, error) {
	inf := &inferrer{
		opts:       opts,
		root:       t,
		inProgress: map[reflect.Type]bool{},
		recursive:  map[reflect.Type]bool{},
		defNames:   map[reflect.Type]string{},
		usedNames:  map[string]bool{},
		defs:       map[string]*Schema{},
	}
	s, err := inf.schemaFor(t, "")
	if err != nil {
		return nil, err
	}
	if len(inf.defs) > 0 {
		s.Defs = inf.defs
	}
	return s, nil
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
	jsontextType    = reflect.TypeFor[jsontext.Value]()
	rawMessageType  = reflect.TypeFor[stdjson.RawMessage]()
	schemerType     = reflect.TypeFor[Schemer]()
	textMarshalType = reflect.TypeFor[encoding.TextMarshaler]()
	jsonMethodTypes = []reflect.Type{
		reflect.TypeFor[json.MarshalerTo](),
		reflect.TypeFor[json.Marshaler](),
		reflect.TypeFor[stdjson.Marshaler](),
	}
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface))
}

// recursable reports whether t is a named type that could contain itself.
func recursable(t reflect.Type) bool {
	if t.Name() == "" {
		return false
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Map, reflect.Array:
		return true
	}
	return false
}

// schemaFor returns the schema of t. format is the json v2 field format
// option, if any.
func (inf *inferrer) schemaFor(t reflect.Type, format string) (*Schema, error) {
	if s, ok := inf.opts.TypeSchemas[t]; ok {
		return s.Clone(), nil
	}
	if recursable(t) {
		if inf.inProgress[t] {
			inf.recursive[t] = true
			return &Schema{Ref: inf.refTo(t)}, nil
		}
		if inf.recursive[t] && t != inf.root {
			return &Schema{Ref: inf.refTo(t)}, nil
		}
		inf.inProgress[t] = true
		s, err := inf.schemaOf(t, format)
		delete(inf.inProgress, t)
		if err != nil {
			return nil, err
		}
		if inf.recursive[t] && t != inf.root {
			inf.defs[inf.defNames[t]] = s
			return &Schema{Ref: inf.refTo(t)}, nil
		}
		return s, nil
	}
	return inf.schemaOf(t, format)
}

// refTo returns the reference to recursive type t, naming its definition.
func (inf *inferrer) refTo(t reflect.Type) string {
	if t == inf.root {
		return "#"
	}
	name, ok := inf.defNames[t]
	if !ok {
		base := defName(t)
		name = base
		for i := 2; inf.usedNames[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		inf.usedNames[name] = true
		inf.defNames[t] = name
	}
	return "#/$defs/" + name
}

func defName(t reflect.Type) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
			return r
		}
		return '_'
	}, t.Name())
}

func (inf *inferrer) schemaOf(t reflect.Type, format string) (*Schema, error) {
	if implements(t, schemerType) {
		v := reflect.New(t)
		var s *Schema
		if t.Implements(schemerType) {
			s = v.Elem().Interface().(Schemer).JSONSchema()
		} else {
			s = v.Interface().(Schemer).JSONSchema()
		}
		if s == nil {
			return nil, fmt.Errorf("%v.JSONSchema returned nil", t)
		}
		return s.Clone(), nil
	}
	switch t {
	case timeType:
		switch format {
		case "", "RFC3339", "RFC3339Nano":
			return &Schema{Type: "string", Format: "date-time"}, nil
		case "DateOnly":
			return &Schema{Type: "string", Format: "date"}, nil
		case "unix", "unixmilli", "unixmicro", "unixnano":
			return &Schema{Type: "number"}, nil
		}
		return &Schema{Type: "string"}, nil
	case durationType:
		switch format {
		case "sec", "milli", "micro":
			return &Schema{Type: "number"}, nil
		case "nano":
			return &Schema{Type: "integer"}, nil
		}
		return &Schema{Type: "string"}, nil
	case jsontextType, rawMessageType:
		return &Schema{}, nil
	}
	if t.Kind() == reflect.Pointer {
		elem, err := inf.schemaFor(t.Elem(), format)
		if err != nil {
			return nil, err
		}
		return nullable(elem), nil
	}
	if slices.ContainsFunc(jsonMethodTypes, func(m reflect.Type) bool { return implements(t, m) }) {
		return &Schema{}, nil
	}
	if implements(t, textMarshalType) {
		return &Schema{Type: "string"}, nil
	}

	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}, nil
	case reflect.String:
		return &Schema{Type: "string"}, nil
	case reflect.Int, reflect.Int64:
		return &Schema{Type: "integer"}, nil
	case reflect.Int8, reflect.Int16, reflect.Int32:
		bits := t.Bits()
		return &Schema{Type: "integer", Minimum: Ptr(-math.Ldexp(1, bits-1)), Maximum: Ptr(math.Ldexp(1, bits-1) - 1)}, nil
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Minimum: Ptr(0.0)}, nil
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return &Schema{Type: "integer", Minimum: Ptr(0.0), Maximum: Ptr(math.Ldexp(1, t.Bits()) - 1)}, nil
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: "number"}, nil
	case reflect.Interface:
		return &Schema{}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && format != "array" && !implements(t.Elem(), textMarshalType) &&
			!slices.ContainsFunc(jsonMethodTypes, func(m reflect.Type) bool { return implements(t.Elem(), m) }) {
			enc := "base64"
			switch format {
			case "base64url", "base32", "base32hex":
				enc = format
			case "base16", "hex":
				enc = "base16"
			}
			return &Schema{Type: "string", ContentEncoding: enc}, nil
		}
		items, err := inf.schemaFor(t.Elem(), "")
		if err != nil {
			return nil, err
		}
		s := &Schema{Type: "array", Items: items}
		if t.Kind() == reflect.Array {
			s.MinItems, s.MaxItems = Ptr(t.Len()), Ptr(t.Len())
		}
		return s, nil
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !implements(k, textMarshalType) {
				return nil, fmt.Errorf("map key type %v cannot be a JSON object name", k)
			}
		}
		vals, err := inf.schemaFor(t.Elem(), "")
		if err != nil {
			return nil, err
		}
		return &Schema{Type: "object", AdditionalProperties: vals}, nil
	case reflect.Struct:
		return inf.structSchema(t)
	}
	return nil, fmt.Errorf("type %v has no JSON representation", t)
}

// nullable returns s widened to also accept null.
func nullable(s *Schema) *Schema {
	switch {
	case s.Ref != "":
		return &Schema{AnyOf: []*Schema{s, {Type: "null"}}}
	case s.Const != nil:
		return &Schema{AnyOf: []*Schema{s, {Type: "null"}}}
	case len(s.Types) > 0:
		if !slices.Contains(s.Types, "null") {
			s.Types = append(s.Types, "null")
		}
	case s.Type != "" && s.Type != "null":
		s.Types = []string{s.Type, "null"}
		s.Type = ""
	default:
		return s // accepts null already
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(v any) bool {
		raw, ok := v.(jsontext.Value)
		return ok && string(raw) == "null" || v == nil
	}) {
		s.Enum = append(s.Enum, jsontext.Value("null"))
	}
	return s
}

// field is a struct field as json v2 sees it.
type field struct {
	name      string
	hasName   bool
	index     []int
	sf        reflect.StructField
	omit      bool // omitempty or omitzero
	str       bool // the string option
	format    string
	fallback  bool // embedded fallback (a map or jsontext.Value with embed)
	ownerType reflect.Type
}

// structFields returns the fields of struct type t in marshalling order,
// following json v2: embedded structs are flattened, and of fields with the
// same name only a dominant one (shallowest, or uniquely named by a tag)
// is kept.
func structFields(t reflect.Type) ([]field, *field, error) {
	type entry struct {
		t     reflect.Type
		index []int
	}
	queue := []entry{{t, nil}}
	seen := map[reflect.Type]bool{t: true}
	var all []field
	var fallback *field
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		for i := range e.t.NumField() {
			sf := e.t.Field(i)
			tag, hasTag := sf.Tag.Lookup("json")
			if tag == "-" {
				continue
			}
			if !sf.IsExported() && !sf.Anonymous {
				continue
			}
			f := field{name: sf.Name, sf: sf, ownerType: e.t, index: append(slices.Clone(e.index), i)}
			if hasTag {
				if err := parseJSONTag(&f, tag); err != nil {
					return nil, nil, fmt.Errorf("field %s.%s: %w", e.t.Name(), sf.Name, err)
				}
			}
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			embed := f.fallback || (sf.Anonymous && !f.hasName)
			f.fallback = false
			if embed {
				switch {
				case ft.Kind() == reflect.Struct:
					if !seen[ft] {
						seen[ft] = true
						queue = append(queue, entry{ft, f.index})
					}
					continue
				case ft == jsontextType || (ft.Kind() == reflect.Map && ft.Key().Kind() == reflect.String):
					f.fallback = true
					if fallback == nil || len(f.index) < len(fallback.index) {
						fallback = &f
					}
					continue
				case sf.Anonymous && !f.hasName:
					if !sf.IsExported() {
						continue
					}
					return nil, nil, fmt.Errorf("field %s.%s: embedded field of non-struct type %v must be given a JSON name", e.t.Name(), sf.Name, sf.Type)
				}
			}
			if !sf.IsExported() {
				continue
			}
			all = append(all, f)
		}
	}
	// Keep the dominant field of each name.
	slices.SortStableFunc(all, func(x, y field) int {
		return cmp.Or(strings.Compare(x.name, y.name), cmp.Compare(len(x.index), len(y.index)),
			boolCompare(!x.hasName, !y.hasName))
	})
	kept := all[:0]
	for len(all) > 0 {
		n := 1
		for n < len(all) && all[n].name == all[0].name {
			n++
		}
		if n == 1 || len(all[0].index) != len(all[1].index) || all[0].hasName != all[1].hasName {
			kept = append(kept, all[0])
		}
		all = all[n:]
	}
	slices.SortFunc(kept, func(x, y field) int { return slices.Compare(x.index, y.index) })
	return kept, fallback, nil
}

func boolCompare(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// parseJSONTag reads a json v2 field tag into f.
func parseJSONTag(f *field, tag string) error {
	name, opts, _ := strings.Cut(tag, ",")
	if strings.HasPrefix(name, "'") {
		// A single-quoted name may contain commas.
		end := strings.IndexByte(tag[1:], '\'')
		if end < 0 {
			return fmt.Errorf("malformed json tag %q", tag)
		}
		name = tag[1 : end+1]
		opts = strings.TrimPrefix(tag[end+2:], ",")
	}
	if name != "" {
		f.name, f.hasName = name, true
	}
	for opts != "" {
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		switch {
		case opt == "omitempty", opt == "omitzero":
			f.omit = true
		case opt == "string":
			f.str = true
		case opt == "embed", opt == "inline", opt == "unknown":
			f.fallback = true
		case strings.HasPrefix(opt, "format:"):
			f.format = strings.Trim(strings.TrimPrefix(opt, "format:"), "'")
		}
	}
	return nil
}

func (inf *inferrer) structSchema(t reflect.Type) (*Schema, error) {
	fields, fallback, err := structFields(t)
	if err != nil {
		return nil, err
	}
	s := &Schema{Type: "object", Properties: map[string]*Schema{}, PropertyOrder: []string{}}
	for _, f := range fields {
		fs, err := inf.fieldSchema(f)
		if err != nil {
			return nil, fmt.Errorf("field %s.%s: %w", f.ownerType.Name(), f.sf.Name, err)
		}
		s.Properties[f.name] = fs.schema
		s.PropertyOrder = append(s.PropertyOrder, f.name)
		if fs.required {
			s.Required = append(s.Required, f.name)
		}
	}
	switch {
	case fallback != nil:
		ft := fallback.sf.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Map {
			vals, err := inf.schemaFor(ft.Elem(), "")
			if err != nil {
				return nil, fmt.Errorf("field %s.%s: %w", fallback.ownerType.Name(), fallback.sf.Name, err)
			}
			if !isEmptySchema(vals) {
				s.AdditionalProperties = vals
			}
		}
	case !inf.opts.AllowAdditionalProperties:
		s.AdditionalProperties = False()
	}
	return s, nil
}

func isEmptySchema(s *Schema) bool {
	return s.boolean == boolTrue || reflect.ValueOf(*s).IsZero()
}

type fieldSchema struct {
	schema   *Schema
	required bool
}

func (inf *inferrer) fieldSchema(f field) (fieldSchema, error) {
	tags, err := parseTags(f.sf)
	if err != nil {
		return fieldSchema{}, err
	}
	t := f.sf.Type
	var s *Schema
	if f.str && isNumberKind(derefType(t).Kind()) {
		s = &Schema{Type: "string"}
		if t.Kind() == reflect.Pointer && !f.omit {
			s = nullable(s)
		}
	} else if t.Kind() == reflect.Pointer && f.omit {
		// A nil pointer is omitted, never marshalled as null.
		s, err = inf.schemaFor(t.Elem(), f.format)
	} else {
		s, err = inf.schemaFor(t, f.format)
	}
	if err != nil {
		return fieldSchema{}, err
	}
	if err := tags.apply(s); err != nil {
		return fieldSchema{}, err
	}
	required := !f.omit && t.Kind() != reflect.Pointer
	switch tags.required {
	case 1:
		required = true
	case -1:
		required = false
	}
	return fieldSchema{s, required}, nil
}

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func isNumberKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
