package jsonschema

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Schema is a JSON Schema document or subschema. It marshals to and
// unmarshals from JSON with json v2 (it implements [json.MarshalerTo] and
// [json.UnmarshalerFrom]); the field tags document the keyword each field
// holds.
//
// A nil *Schema is absent. The boolean schemas are [True] (every value is
// valid; the same as an empty Schema) and [False] (no value is valid): use
// False for "additionalProperties": false.
//
// Properties is a map, but JSON objects have an order that matters to the
// reader of a tool schema, so PropertyOrder lists the property names in the
// order they are marshalled; names missing from PropertyOrder follow in
// sorted order. Unmarshalling fills PropertyOrder with the order of the
// document, and [Infer] with the order of the struct fields.
//
// Enum and Examples elements are Go values marshalled with json v2; when a
// schema is unmarshalled each element is a [jsontext.Value] holding the
// exact JSON, so that large numbers keep their precision.
//
// Keywords without a field (from other dialects, such as "dependencies",
// the array form of "items", or extension keywords such as "x-mcp-header")
// are kept verbatim in Extra and marshalled back.
type Schema struct {
	// Core vocabulary.
	Schema        string             `json:"$schema,omitempty"`
	ID            string             `json:"$id,omitempty"`
	Ref           string             `json:"$ref,omitempty"`
	Anchor        string             `json:"$anchor,omitempty"`
	DynamicRef    string             `json:"$dynamicRef,omitempty"`
	DynamicAnchor string             `json:"$dynamicAnchor,omitempty"`
	Comment       string             `json:"$comment,omitempty"`
	Defs          map[string]*Schema `json:"$defs,omitempty"`
	// Definitions is the draft-07 spelling of Defs.
	Definitions map[string]*Schema `json:"definitions,omitempty"`

	// Meta-data vocabulary.
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Default     jsontext.Value `json:"default,omitempty"`
	Deprecated  bool           `json:"deprecated,omitempty"`
	ReadOnly    bool           `json:"readOnly,omitempty"`
	WriteOnly   bool           `json:"writeOnly,omitempty"`
	Examples    []any          `json:"examples,omitempty"`

	// Validation vocabulary, any type. Type holds a single type name;
	// Types holds a list such as ["string", "null"] and wins over Type when
	// not empty.
	Type  string         `json:"type,omitempty"`
	Types []string       `json:"-"`
	Enum  []any          `json:"enum,omitempty"`
	Const jsontext.Value `json:"const,omitempty"`

	// Numbers.
	MultipleOf       *float64 `json:"multipleOf,omitempty"`
	Minimum          *float64 `json:"minimum,omitempty"`
	Maximum          *float64 `json:"maximum,omitempty"`
	ExclusiveMinimum *float64 `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum *float64 `json:"exclusiveMaximum,omitempty"`

	// Strings.
	MinLength        *int   `json:"minLength,omitempty"`
	MaxLength        *int   `json:"maxLength,omitempty"`
	Pattern          string `json:"pattern,omitempty"`
	Format           string `json:"format,omitempty"`
	ContentEncoding  string `json:"contentEncoding,omitempty"`
	ContentMediaType string `json:"contentMediaType,omitempty"`

	// Arrays.
	PrefixItems      []*Schema `json:"prefixItems,omitempty"`
	Items            *Schema   `json:"items,omitempty"`
	Contains         *Schema   `json:"contains,omitempty"`
	MinContains      *int      `json:"minContains,omitempty"`
	MaxContains      *int      `json:"maxContains,omitempty"`
	UnevaluatedItems *Schema   `json:"unevaluatedItems,omitempty"`
	MinItems         *int      `json:"minItems,omitempty"`
	MaxItems         *int      `json:"maxItems,omitempty"`
	UniqueItems      bool      `json:"uniqueItems,omitempty"`

	// Objects.
	Properties            map[string]*Schema  `json:"properties,omitempty"`
	PropertyOrder         []string            `json:"-"`
	PatternProperties     map[string]*Schema  `json:"patternProperties,omitempty"`
	AdditionalProperties  *Schema             `json:"additionalProperties,omitempty"`
	PropertyNames         *Schema             `json:"propertyNames,omitempty"`
	UnevaluatedProperties *Schema             `json:"unevaluatedProperties,omitempty"`
	Required              []string            `json:"required,omitempty"`
	DependentRequired     map[string][]string `json:"dependentRequired,omitempty"`
	DependentSchemas      map[string]*Schema  `json:"dependentSchemas,omitempty"`
	MinProperties         *int                `json:"minProperties,omitempty"`
	MaxProperties         *int                `json:"maxProperties,omitempty"`

	// Applicators.
	AllOf []*Schema `json:"allOf,omitempty"`
	AnyOf []*Schema `json:"anyOf,omitempty"`
	OneOf []*Schema `json:"oneOf,omitempty"`
	Not   *Schema   `json:"not,omitempty"`
	If    *Schema   `json:"if,omitempty"`
	Then  *Schema   `json:"then,omitempty"`
	Else  *Schema   `json:"else,omitempty"`

	// Extra holds the keywords that have no field, as raw JSON.
	Extra map[string]jsontext.Value `json:"-"`

	// boolean is boolTrue or boolFalse for the boolean schemas.
	boolean uint8
	// inexact is set by unmarshalling when a numeric keyword lost
	// precision in its float64 field.
	inexact bool
}

const (
	boolTrue  = 1
	boolFalse = 2
)

// True returns the schema true, which every value satisfies.
func True() *Schema { return &Schema{boolean: boolTrue} }

// False returns the schema false, which no value satisfies.
func False() *Schema { return &Schema{boolean: boolFalse} }

// IsFalse reports whether s is the boolean schema false.
func (s *Schema) IsFalse() bool { return s != nil && s.boolean == boolFalse }

// IsTrue reports whether s is the boolean schema true. An empty Schema is
// equivalent but is not reported.
func (s *Schema) IsTrue() bool { return s != nil && s.boolean == boolTrue }

// Ptr returns a pointer to v, for the optional numeric fields of [Schema].
func Ptr[T any](v T) *T { return &v }

// keyword describes how one field of Schema is marshalled.
type keyword struct {
	name  string
	field func(s *Schema) any // pointer to the field
}

// keywords lists the plain fields in marshalling order. "type",
// "properties", "enum" and "examples" are handled specially.
var keywords = []keyword{
	{"$schema", func(s *Schema) any { return &s.Schema }},
	{"$id", func(s *Schema) any { return &s.ID }},
	{"$anchor", func(s *Schema) any { return &s.Anchor }},
	{"$dynamicAnchor", func(s *Schema) any { return &s.DynamicAnchor }},
	{"$ref", func(s *Schema) any { return &s.Ref }},
	{"$dynamicRef", func(s *Schema) any { return &s.DynamicRef }},
	{"$comment", func(s *Schema) any { return &s.Comment }},
	{"title", func(s *Schema) any { return &s.Title }},
	{"description", func(s *Schema) any { return &s.Description }},
	{"type", nil},
	{"enum", nil},
	{"const", func(s *Schema) any { return &s.Const }},
	{"default", func(s *Schema) any { return &s.Default }},
	{"examples", nil},
	{"deprecated", func(s *Schema) any { return &s.Deprecated }},
	{"readOnly", func(s *Schema) any { return &s.ReadOnly }},
	{"writeOnly", func(s *Schema) any { return &s.WriteOnly }},
	{"multipleOf", func(s *Schema) any { return &s.MultipleOf }},
	{"minimum", func(s *Schema) any { return &s.Minimum }},
	{"exclusiveMinimum", func(s *Schema) any { return &s.ExclusiveMinimum }},
	{"maximum", func(s *Schema) any { return &s.Maximum }},
	{"exclusiveMaximum", func(s *Schema) any { return &s.ExclusiveMaximum }},
	{"minLength", func(s *Schema) any { return &s.MinLength }},
	{"maxLength", func(s *Schema) any { return &s.MaxLength }},
	{"pattern", func(s *Schema) any { return &s.Pattern }},
	{"format", func(s *Schema) any { return &s.Format }},
	{"contentEncoding", func(s *Schema) any { return &s.ContentEncoding }},
	{"contentMediaType", func(s *Schema) any { return &s.ContentMediaType }},
	{"prefixItems", func(s *Schema) any { return &s.PrefixItems }},
	{"items", func(s *Schema) any { return &s.Items }},
	{"contains", func(s *Schema) any { return &s.Contains }},
	{"minContains", func(s *Schema) any { return &s.MinContains }},
	{"maxContains", func(s *Schema) any { return &s.MaxContains }},
	{"unevaluatedItems", func(s *Schema) any { return &s.UnevaluatedItems }},
	{"minItems", func(s *Schema) any { return &s.MinItems }},
	{"maxItems", func(s *Schema) any { return &s.MaxItems }},
	{"uniqueItems", func(s *Schema) any { return &s.UniqueItems }},
	{"properties", nil},
	{"patternProperties", func(s *Schema) any { return &s.PatternProperties }},
	{"additionalProperties", func(s *Schema) any { return &s.AdditionalProperties }},
	{"propertyNames", func(s *Schema) any { return &s.PropertyNames }},
	{"unevaluatedProperties", func(s *Schema) any { return &s.UnevaluatedProperties }},
	{"required", func(s *Schema) any { return &s.Required }},
	{"dependentRequired", func(s *Schema) any { return &s.DependentRequired }},
	{"dependentSchemas", func(s *Schema) any { return &s.DependentSchemas }},
	{"minProperties", func(s *Schema) any { return &s.MinProperties }},
	{"maxProperties", func(s *Schema) any { return &s.MaxProperties }},
	{"allOf", func(s *Schema) any { return &s.AllOf }},
	{"anyOf", func(s *Schema) any { return &s.AnyOf }},
	{"oneOf", func(s *Schema) any { return &s.OneOf }},
	{"not", func(s *Schema) any { return &s.Not }},
	{"if", func(s *Schema) any { return &s.If }},
	{"then", func(s *Schema) any { return &s.Then }},
	{"else", func(s *Schema) any { return &s.Else }},
	{"$defs", func(s *Schema) any { return &s.Defs }},
	{"definitions", func(s *Schema) any { return &s.Definitions }},
}

var keywordIndex = func() map[string]int {
	m := make(map[string]int, len(keywords))
	for i, k := range keywords {
		m[k.name] = i
	}
	return m
}()

// MarshalJSONTo implements [json.MarshalerTo].
func (s *Schema) MarshalJSONTo(enc *jsontext.Encoder) error {
	switch {
	case s == nil:
		return enc.WriteToken(jsontext.Null)
	case s.boolean == boolTrue:
		return enc.WriteToken(jsontext.True)
	case s.boolean == boolFalse:
		return enc.WriteToken(jsontext.False)
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, k := range keywords {
		var v any
		switch k.name {
		case "type":
			switch {
			case len(s.Types) > 0:
				v = s.Types
			case s.Type != "":
				v = s.Type
			}
		case "enum":
			if s.Enum != nil {
				v = s.Enum
			}
		case "examples":
			if s.Examples != nil {
				v = s.Examples
			}
		case "properties":
			if s.Properties != nil {
				if err := enc.WriteToken(jsontext.String("properties")); err != nil {
					return err
				}
				if err := s.marshalProperties(enc); err != nil {
					return err
				}
			}
			continue
		default:
			if _, ok := s.Extra[k.name]; ok {
				continue // a value of another form, marshalled from Extra
			}
			p := k.field(s)
			if reflect.ValueOf(p).Elem().IsZero() {
				continue
			}
			v = p
		}
		if v == nil {
			continue
		}
		if err := enc.WriteToken(jsontext.String(k.name)); err != nil {
			return err
		}
		if err := json.MarshalEncode(enc, v, json.Deterministic(true)); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Extra)) {
		if err := enc.WriteToken(jsontext.String(name)); err != nil {
			return err
		}
		if err := enc.WriteValue(s.Extra[name]); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// orderedProperties returns the property names in marshalling order.
func (s *Schema) orderedProperties() []string {
	names := make([]string, 0, len(s.Properties))
	seen := make(map[string]bool, len(s.Properties))
	for _, n := range s.PropertyOrder {
		if _, ok := s.Properties[n]; ok && !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) < len(s.Properties) {
		rest := make([]string, 0, len(s.Properties)-len(names))
		for n := range s.Properties {
			if !seen[n] {
				rest = append(rest, n)
			}
		}
		slices.Sort(rest)
		names = append(names, rest...)
	}
	return names
}

func (s *Schema) marshalProperties(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	for _, n := range s.orderedProperties() {
		if err := enc.WriteToken(jsontext.String(n)); err != nil {
			return err
		}
		if err := s.Properties[n].MarshalJSONTo(enc); err != nil {
			return err
		}
	}
	return enc.WriteToken(jsontext.EndObject)
}

// UnmarshalJSONFrom implements [json.UnmarshalerFrom].
func (s *Schema) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*s = Schema{}
	switch dec.PeekKind() {
	case 't', 'f':
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Bool() {
			s.boolean = boolTrue
		} else {
			s.boolean = boolFalse
		}
		return nil
	case '{':
	default:
		_, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return fmt.Errorf("a JSON Schema must be an object or a boolean")
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		if err := s.unmarshalKeyword(dec, name); err != nil {
			return fmt.Errorf("keyword %q: %w", name, err)
		}
	}
	_, err := dec.ReadToken()
	return err
}

func (s *Schema) unmarshalKeyword(dec *jsontext.Decoder, name string) error {
	i, ok := keywordIndex[name]
	if !ok {
		return s.unmarshalExtra(dec, name)
	}
	switch name {
	case "type":
		if dec.PeekKind() == '[' {
			if err := json.UnmarshalDecode(dec, &s.Types); err != nil {
				return err
			}
			if s.Types == nil {
				s.Types = []string{}
			}
			return nil
		}
		return json.UnmarshalDecode(dec, &s.Type)
	case "enum":
		return unmarshalValues(dec, &s.Enum)
	case "examples":
		return unmarshalValues(dec, &s.Examples)
	case "items":
		if dec.PeekKind() == '[' { // the tuple form of older dialects
			return s.unmarshalExtra(dec, name)
		}
	case "properties":
		return s.unmarshalProperties(dec)
	case "const", "default":
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		*keywords[i].field(s).(*jsontext.Value) = v.Clone()
		return nil
	}
	if dec.PeekKind() == '{' || dec.PeekKind() == '[' || name == "items" {
		// Subschemas: report errors inside them.
		return json.UnmarshalDecode(dec, keywords[i].field(s))
	}
	// A scalar of another form than the field's (such as the boolean
	// exclusiveMinimum of draft-04, or a minLength of 2.0) is kept in
	// Extra.
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	dst := reflect.ValueOf(keywords[i].field(s)).Elem()
	tmp := reflect.New(dst.Type())
	if err := json.Unmarshal(v, tmp.Interface()); err != nil {
		if s.Extra == nil {
			s.Extra = make(map[string]jsontext.Value)
		}
		s.Extra[name] = v.Clone()
		return nil
	}
	dst.Set(tmp.Elem())
	if f, ok := tmp.Interface().(**float64); ok && *f != nil && v.Kind() == '0' {
		// A number that float64 cannot hold exactly, such as
		// 9007199254740993: the fast validator would see another bound.
		if string(canonical(v)) != string(canonical(strconv.AppendFloat(nil, **f, 'g', -1, 64))) {
			s.inexact = true
		}
	}
	return nil
}

func (s *Schema) unmarshalExtra(dec *jsontext.Decoder, name string) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if s.Extra == nil {
		s.Extra = make(map[string]jsontext.Value)
	}
	s.Extra[name] = v.Clone()
	return nil
}

func unmarshalValues(dec *jsontext.Decoder, dst *[]any) error {
	if dec.PeekKind() != '[' {
		_, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return fmt.Errorf("must be an array")
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	vals := []any{}
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		vals = append(vals, v.Clone())
	}
	*dst = vals
	_, err := dec.ReadToken()
	return err
}

func (s *Schema) unmarshalProperties(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '{' {
		_, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return fmt.Errorf("must be an object")
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	s.Properties = map[string]*Schema{}
	s.PropertyOrder = []string{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String()
		sub := new(Schema)
		if err := sub.UnmarshalJSONFrom(dec); err != nil {
			return fmt.Errorf("property %q: %w", name, err)
		}
		s.Properties[name] = sub
		s.PropertyOrder = append(s.PropertyOrder, name)
	}
	_, err := dec.ReadToken()
	return err
}

// String returns the schema as indented JSON, for debugging.
func (s *Schema) String() string {
	b, err := json.Marshal(s, jsontext.WithIndent("  "))
	if err != nil {
		return "<invalid schema: " + err.Error() + ">"
	}
	return string(b)
}

// Clone returns a deep copy of s.
func (s *Schema) Clone() *Schema {
	if s == nil {
		return nil
	}
	c := *s
	c.Defs = cloneSchemaMap(s.Defs)
	c.Definitions = cloneSchemaMap(s.Definitions)
	c.Default = cloneValue(s.Default)
	c.Examples = slices.Clone(s.Examples)
	c.Types = slices.Clone(s.Types)
	c.Enum = slices.Clone(s.Enum)
	c.Const = cloneValue(s.Const)
	c.MultipleOf = clonePtr(s.MultipleOf)
	c.Minimum = clonePtr(s.Minimum)
	c.Maximum = clonePtr(s.Maximum)
	c.ExclusiveMinimum = clonePtr(s.ExclusiveMinimum)
	c.ExclusiveMaximum = clonePtr(s.ExclusiveMaximum)
	c.MinLength = clonePtr(s.MinLength)
	c.MaxLength = clonePtr(s.MaxLength)
	c.PrefixItems = cloneSchemaSlice(s.PrefixItems)
	c.Items = s.Items.Clone()
	c.Contains = s.Contains.Clone()
	c.MinContains = clonePtr(s.MinContains)
	c.MaxContains = clonePtr(s.MaxContains)
	c.UnevaluatedItems = s.UnevaluatedItems.Clone()
	c.MinItems = clonePtr(s.MinItems)
	c.MaxItems = clonePtr(s.MaxItems)
	c.Properties = cloneSchemaMap(s.Properties)
	c.PropertyOrder = slices.Clone(s.PropertyOrder)
	c.PatternProperties = cloneSchemaMap(s.PatternProperties)
	c.AdditionalProperties = s.AdditionalProperties.Clone()
	c.PropertyNames = s.PropertyNames.Clone()
	c.UnevaluatedProperties = s.UnevaluatedProperties.Clone()
	c.Required = slices.Clone(s.Required)
	if s.DependentRequired != nil {
		c.DependentRequired = make(map[string][]string, len(s.DependentRequired))
		for k, v := range s.DependentRequired {
			c.DependentRequired[k] = slices.Clone(v)
		}
	}
	c.DependentSchemas = cloneSchemaMap(s.DependentSchemas)
	c.MinProperties = clonePtr(s.MinProperties)
	c.MaxProperties = clonePtr(s.MaxProperties)
	c.AllOf = cloneSchemaSlice(s.AllOf)
	c.AnyOf = cloneSchemaSlice(s.AnyOf)
	c.OneOf = cloneSchemaSlice(s.OneOf)
	c.Not = s.Not.Clone()
	c.If = s.If.Clone()
	c.Then = s.Then.Clone()
	c.Else = s.Else.Clone()
	if s.Extra != nil {
		c.Extra = make(map[string]jsontext.Value, len(s.Extra))
		for k, v := range s.Extra {
			c.Extra[k] = cloneValue(v)
		}
	}
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneValue(v jsontext.Value) jsontext.Value {
	if v == nil {
		return nil
	}
	return v.Clone()
}

func cloneSchemaMap(m map[string]*Schema) map[string]*Schema {
	if m == nil {
		return nil
	}
	c := make(map[string]*Schema, len(m))
	for k, v := range m {
		c[k] = v.Clone()
	}
	return c
}

func cloneSchemaSlice(s []*Schema) []*Schema {
	if s == nil {
		return nil
	}
	c := make([]*Schema, len(s))
	for i, v := range s {
		c[i] = v.Clone()
	}
	return c
}
