package jsonschema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Bounds on the schemas [Compile] and [CompileJSON] accept, so that a
// schema from a peer cannot make compilation or validation run away.
const (
	// MaxSubschemas is the most subschemas a schema may have.
	MaxSubschemas = 10000
	// MaxSchemaDepth is the deepest subschemas may nest.
	MaxSchemaDepth = 64
	// MaxExpansion bounds the size of a schema with its local references
	// expanded (each $ref counting the size of its target, a reference
	// cycle counting once): it stops a few definitions that each refer
	// twice to the next from making validation exponentially expensive.
	MaxExpansion = 100000
)

// children calls f on each direct subschema of s.
func (s *Schema) children(f func(key string, c *Schema)) {
	each := func(key string, m map[string]*Schema) {
		for _, name := range slices.Sorted(mapKeys(m)) {
			f(key+"/"+escapePointer(name), m[name])
		}
	}
	list := func(key string, l []*Schema) {
		for i, c := range l {
			f(key+"/"+strconv.Itoa(i), c)
		}
	}
	one := func(key string, c *Schema) {
		if c != nil {
			f(key, c)
		}
	}
	each("$defs", s.Defs)
	each("definitions", s.Definitions)
	list("prefixItems", s.PrefixItems)
	one("items", s.Items)
	one("contains", s.Contains)
	one("unevaluatedItems", s.UnevaluatedItems)
	each("properties", s.Properties)
	each("patternProperties", s.PatternProperties)
	one("additionalProperties", s.AdditionalProperties)
	one("propertyNames", s.PropertyNames)
	one("unevaluatedProperties", s.UnevaluatedProperties)
	each("dependentSchemas", s.DependentSchemas)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	one("not", s.Not)
	one("if", s.If)
	one("then", s.Then)
	one("else", s.Else)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// checkBounds enforces MaxSubschemas, MaxSchemaDepth and MaxExpansion.
func checkBounds(root *Schema) error {
	b := &bounder{
		root:      root,
		pointers:  map[string]*Schema{},
		anchors:   map[string]*Schema{},
		expansion: map[*Schema]int{},
	}
	if err := b.walk(root, "", 1); err != nil {
		return err
	}
	if n := b.expand(root); n > MaxExpansion {
		return fmt.Errorf("schema too expensive: with its references expanded it has more than %d subschemas", MaxExpansion)
	}
	return nil
}

type bounder struct {
	root      *Schema
	count     int
	pointers  map[string]*Schema // JSON pointer → subschema
	anchors   map[string]*Schema // $anchor and $dynamicAnchor → subschema
	expansion map[*Schema]int    // expanded size; -1 while being computed
}

func (b *bounder) walk(s *Schema, ptr string, depth int) error {
	b.count++
	if b.count > MaxSubschemas {
		return fmt.Errorf("schema too large: more than %d subschemas", MaxSubschemas)
	}
	if depth > MaxSchemaDepth {
		return fmt.Errorf("schema too deep: subschemas nest more than %d levels (at %q)", MaxSchemaDepth, "#"+ptr)
	}
	b.pointers[ptr] = s
	if s.Anchor != "" {
		b.anchors[s.Anchor] = s
	}
	if s.DynamicAnchor != "" {
		b.anchors[s.DynamicAnchor] = s
	}
	// Keywords of other dialects kept as raw JSON may hold subschemas too:
	// count their objects.
	for _, raw := range s.Extra {
		if err := b.walkRaw(raw, depth); err != nil {
			return err
		}
	}
	var err error
	s.children(func(key string, c *Schema) {
		if err == nil {
			err = b.walk(c, ptr+"/"+key, depth+1)
		}
	})
	return err
}

// walkRaw counts the objects of raw JSON as subschemas.
func (b *bounder) walkRaw(raw jsontext.Value, depth int) error {
	dec := jsontext.NewDecoder(strings.NewReader(string(raw)))
	d := depth
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		switch tok.Kind() {
		case '{', '[':
			d++
			if tok.Kind() == '{' {
				b.count++
			}
			if b.count > MaxSubschemas {
				return fmt.Errorf("schema too large: more than %d subschemas", MaxSubschemas)
			}
			if d > 2*MaxSchemaDepth {
				return fmt.Errorf("schema too deep: nests more than %d levels", MaxSchemaDepth)
			}
		case '}', ']':
			d--
		}
	}
}

// expand returns the expanded size of s, saturating above MaxExpansion.
func (b *bounder) expand(s *Schema) int {
	if n, ok := b.expansion[s]; ok {
		if n < 0 {
			return 1 // a cycle: counted once
		}
		return n
	}
	b.expansion[s] = -1
	n := 1
	add := func(m int) {
		n += m
		if n > MaxExpansion {
			n = MaxExpansion + 1
		}
	}
	s.children(func(key string, c *Schema) {
		if !strings.HasPrefix(key, "$defs/") && !strings.HasPrefix(key, "definitions/") {
			add(b.expand(c))
		}
	})
	for _, ref := range []string{s.Ref, s.DynamicRef} {
		if t := b.resolve(ref); t != nil {
			add(b.expand(t))
		}
	}
	b.expansion[s] = n
	return n
}

// resolve finds the target of a local reference, or nil.
func (b *bounder) resolve(ref string) *Schema {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	frag := ref[1:]
	if frag == "" || strings.HasPrefix(frag, "/") {
		return b.pointers[frag]
	}
	return b.anchors[frag]
}
