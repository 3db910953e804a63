package jsonschema

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/go-json-experiment/json"
)

// JSON types as a bit set.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tObject
	tArray
	tNumber
	tInteger
	tString
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBoolean, "object": tObject, "array": tArray,
	"number": tNumber, "integer": tInteger, "string": tString,
}

// node is a compiled schema of the fast validator. The zero node accepts
// everything.
type node struct {
	never bool // the schema false

	// refOnly nodes are just their ref; other nodes with a ref check the
	// value against it too.
	ref     *node
	refOnly bool
	// orNull is X of "anyOf": [X, {"type": "null"}], the form [Infer]
	// gives nullable references: null, or a value valid against X.
	orNull *node

	types     uint8 // allowed types; 0 for any
	typeNames []string

	enum     [][]byte // canonical forms of the allowed values
	enumRaw  [][]byte // the same values as JSON, for messages
	enumSet  map[string]struct{}
	isConst  bool
	hasEnum  bool
	needsStr bool // string checks need the decoded value

	// Numbers.
	minimum, maximum, exclMinimum, exclMaximum, multipleOf *decimal
	hasNumeric                                             bool
	// The same bounds as int64, when they all are small integers: then
	// small integer instances are checked without decimal arithmetic.
	intBounds                                      bool
	minInt, maxInt, exclMinInt, exclMaxInt, mulInt int64

	// Strings.
	minLength, maxLength int // -1 when absent
	pattern              *regexp.Regexp

	// Arrays.
	prefixItems        []*node
	items              *node // nil: any
	minItems, maxItems int
	uniqueItems        bool

	// Objects.
	props              []prop
	propIndex          map[string]int // for many properties
	nRequired          int
	additional         *node // nil: any
	allowed            string
	minProps, maxProps int
	hasObjectChecks    bool
}

// prop is a property of an object node, or a required name that has no
// property schema (declared false; its value is checked by additional).
type prop struct {
	name     string
	node     *node
	declared bool
	required bool
}

// fastCompiler turns a [Schema] into nodes when the schema stays within the
// subset the fast validator implements.
type fastCompiler struct {
	root   *Schema
	draft7 bool
	nodes  map[*Schema]*node
}

// errNotSimple marks a schema outside the fast subset.
type errNotSimple struct{ why string }

func (e *errNotSimple) Error() string { return "outside the fast subset: " + e.why }

func notSimple(format string, args ...any) error {
	return &errNotSimple{fmt.Sprintf(format, args...)}
}

// compileFast compiles root for the fast validator, or reports why it
// cannot.
func compileFast(root *Schema, draft7 bool) (*node, error) {
	c := &fastCompiler{root: root, draft7: draft7, nodes: map[*Schema]*node{}}
	n, err := c.compile(root, true)
	if err != nil {
		return nil, err
	}
	// A chain of references that comes back to its start without reaching
	// a value would loop forever.
	for _, n := range c.nodes {
		seen := map[*node]bool{}
		for m := n; m.ref != nil; m = m.ref {
			if seen[m] {
				return nil, notSimple("$ref cycle")
			}
			seen[m] = true
		}
	}
	return n, nil
}

// newNode returns a node that accepts everything.
func newNode() *node {
	return &node{minLength: -1, maxLength: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
}

func (c *fastCompiler) compile(s *Schema, isRoot bool) (*node, error) {
	if s == nil {
		return newNode(), nil
	}
	if n, ok := c.nodes[s]; ok {
		return n, nil
	}
	n := newNode()
	c.nodes[s] = n
	switch s.boolean {
	case boolTrue:
		return n, nil
	case boolFalse:
		n.never = true
		return n, nil
	}
	switch {
	case s.DynamicRef != "" || s.DynamicAnchor != "":
		return nil, notSimple("$dynamicRef")
	case s.AllOf != nil || s.OneOf != nil || s.Not != nil || (s.AnyOf != nil && nullAlternative(s.AnyOf) < 0):
		return nil, notSimple("composition keywords")
	case s.If != nil || s.Then != nil || s.Else != nil:
		return nil, notSimple("if/then/else")
	case s.PatternProperties != nil || s.PropertyNames != nil || s.UnevaluatedProperties != nil ||
		s.DependentRequired != nil || s.DependentSchemas != nil:
		return nil, notSimple("object keywords")
	case s.UnevaluatedItems != nil || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil:
		return nil, notSimple("array keywords")
	case s.inexact:
		return nil, notSimple("numeric keyword beyond float64 precision")
	case !isRoot && (s.ID != "" || s.Schema != ""):
		return nil, notSimple("nested $id or $schema")
	}
	for name := range s.Extra {
		if _, ok := keywordIndex[name]; ok && name != "items" {
			// A keyword whose value did not fit its field.
			return nil, notSimple("keyword %q of unexpected form", name)
		}
	}
	if c.draft7 {
		switch {
		case s.Extra["dependencies"] != nil || s.Extra["additionalItems"] != nil || s.Extra["items"] != nil:
			return nil, notSimple("draft-07 array or object keywords")
		case s.PrefixItems != nil || s.Format != "":
			return nil, notSimple("draft-07 prefixItems or format")
		}
	}
	var err error
	if s.Ref != "" {
		target, err := c.resolve(s.Ref)
		if err != nil {
			return nil, err
		}
		if n.ref, err = c.compile(target, target == c.root); err != nil {
			return nil, err
		}
		n.refOnly = c.draft7 // draft-07 ignores the siblings of $ref
		if n.refOnly {
			return n, nil
		}
	}

	if s.AnyOf != nil {
		alt := s.AnyOf[1-nullAlternative(s.AnyOf)]
		if n.orNull, err = c.compile(alt, alt == c.root); err != nil {
			return nil, err
		}
	}

	// Types.
	names := s.Types
	if len(names) == 0 && s.Type != "" {
		names = []string{s.Type}
	}
	for _, t := range names {
		bit, ok := typeBits[t]
		if !ok {
			return nil, notSimple("unknown type %q", t)
		}
		n.types |= bit
	}
	n.typeNames = names

	// Enum and const.
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum {
			raw, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("enum value %v: %w", v, err)
			}
			n.enumRaw = append(n.enumRaw, raw)
			n.enum = append(n.enum, canonical(raw))
		}
	}
	if s.Const != nil {
		if n.hasEnum {
			return nil, notSimple("enum and const together")
		}
		n.hasEnum, n.isConst = true, true
		n.enumRaw = [][]byte{s.Const}
		n.enum = [][]byte{canonical(s.Const)}
	}
	if len(n.enum) > 8 {
		n.enumSet = make(map[string]struct{}, len(n.enum))
		for _, e := range n.enum {
			n.enumSet[string(e)] = struct{}{}
		}
	}

	// Numbers.
	bound := func(f *float64) (*decimal, error) {
		if f == nil {
			return nil, nil
		}
		if !finite(*f) {
			return nil, fmt.Errorf("numeric keyword is not finite")
		}
		d := decimalOf(*f)
		n.hasNumeric = true
		return &d, nil
	}
	if n.minimum, err = bound(s.Minimum); err != nil {
		return nil, err
	}
	if n.maximum, err = bound(s.Maximum); err != nil {
		return nil, err
	}
	if n.exclMinimum, err = bound(s.ExclusiveMinimum); err != nil {
		return nil, err
	}
	if n.exclMaximum, err = bound(s.ExclusiveMaximum); err != nil {
		return nil, err
	}
	if n.multipleOf, err = bound(s.MultipleOf); err != nil {
		return nil, err
	}
	if n.multipleOf != nil && (n.multipleOf.neg || n.multipleOf.isZero()) {
		return nil, fmt.Errorf("multipleOf must be greater than 0")
	}
	n.intBounds = true
	for _, b := range []struct {
		d   *decimal
		dst *int64
	}{{n.minimum, &n.minInt}, {n.maximum, &n.maxInt}, {n.exclMinimum, &n.exclMinInt}, {n.exclMaximum, &n.exclMaxInt}, {n.multipleOf, &n.mulInt}} {
		if b.d == nil {
			continue
		}
		v, ok := b.d.int64()
		if !ok {
			n.intBounds = false
			break
		}
		*b.dst = v
	}

	// Strings.
	count := func(p *int, what string) (int, error) {
		if p == nil {
			return -1, nil
		}
		if *p < 0 {
			return 0, fmt.Errorf("%s must not be negative", what)
		}
		return *p, nil
	}
	if n.minLength, err = count(s.MinLength, "minLength"); err != nil {
		return nil, err
	}
	if n.maxLength, err = count(s.MaxLength, "maxLength"); err != nil {
		return nil, err
	}
	if s.Pattern != "" {
		if n.pattern, err = regexp.Compile(s.Pattern); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", s.Pattern, err)
		}
	}
	n.needsStr = n.pattern != nil || n.hasEnum

	// Arrays.
	for _, p := range s.PrefixItems {
		pn, err := c.compile(p, false)
		if err != nil {
			return nil, err
		}
		n.prefixItems = append(n.prefixItems, pn)
	}
	if s.Items != nil {
		if n.items, err = c.compile(s.Items, false); err != nil {
			return nil, err
		}
	}
	if n.minItems, err = count(s.MinItems, "minItems"); err != nil {
		return nil, err
	}
	if n.maxItems, err = count(s.MaxItems, "maxItems"); err != nil {
		return nil, err
	}
	n.uniqueItems = s.UniqueItems

	// Objects.
	for _, name := range s.orderedProperties() {
		pn, err := c.compile(s.Properties[name], false)
		if err != nil {
			return nil, err
		}
		n.props = append(n.props, prop{name: name, node: pn, declared: true})
	}
	for _, r := range s.Required {
		i := n.propIndexOf(r)
		if i < 0 {
			n.props = append(n.props, prop{name: r})
			i = len(n.props) - 1
		}
		if !n.props[i].required {
			n.props[i].required = true
			n.nRequired++
		}
	}
	if len(n.props) > 8 {
		n.propIndex = make(map[string]int, len(n.props))
		for i, p := range n.props {
			n.propIndex[p.name] = i
		}
	}
	if s.AdditionalProperties != nil {
		if n.additional, err = c.compile(s.AdditionalProperties, false); err != nil {
			return nil, err
		}
		if n.additional.never {
			var declared []string
			for _, p := range n.props {
				if p.declared {
					declared = append(declared, p.name)
				}
			}
			n.allowed = listNames(declared)
		}
	}
	if n.minProps, err = count(s.MinProperties, "minProperties"); err != nil {
		return nil, err
	}
	if n.maxProps, err = count(s.MaxProperties, "maxProperties"); err != nil {
		return nil, err
	}
	n.hasObjectChecks = len(n.props) > 0 || n.additional != nil || n.minProps >= 0 || n.maxProps >= 0
	return n, nil
}

// nullAlternative returns the index of {"type": "null"} in the two
// alternatives of an anyOf, or -1.
func nullAlternative(alts []*Schema) int {
	if len(alts) != 2 {
		return -1
	}
	for i, a := range alts {
		if a == nil || a.Type != "null" {
			continue
		}
		rest := *a
		rest.Type = ""
		if reflect.ValueOf(rest).IsZero() {
			return i
		}
	}
	return -1
}

func (n *node) propIndexOf(name string) int {
	if n.propIndex != nil {
		if i, ok := n.propIndex[name]; ok {
			return i
		}
		return -1
	}
	for i := range n.props {
		if n.props[i].name == name {
			return i
		}
	}
	return -1
}

// resolve finds the target of a local reference: "#", "#/$defs/name" or
// "#/definitions/name".
func (c *fastCompiler) resolve(ref string) (*Schema, error) {
	if ref == "#" {
		return c.root, nil
	}
	var defs map[string]*Schema
	var name string
	switch {
	case strings.HasPrefix(ref, "#/$defs/"):
		defs, name = c.root.Defs, ref[len("#/$defs/"):]
	case strings.HasPrefix(ref, "#/definitions/"):
		defs, name = c.root.Definitions, ref[len("#/definitions/"):]
	default:
		return nil, notSimple("$ref %q", ref)
	}
	if strings.ContainsAny(name, "/%") {
		return nil, notSimple("$ref %q", ref)
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	target, ok := defs[name]
	if !ok {
		return nil, fmt.Errorf("$ref %q: no such definition", ref)
	}
	return target, nil
}
