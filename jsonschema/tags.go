package jsonschema

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// fieldTags is what the description and jsonschema struct tags of one field
// say.
type fieldTags struct {
	description string
	title       string
	required    int8 // 1: forced required; -1: forced optional; 0: by the rule
	enum        []string
	def         *string
	examples    []string
	format      string
	pattern     *string
	deprecated  bool
	readOnly    bool

	minimum, maximum                   *float64
	exclusiveMinimum, exclusiveMaximum *float64
	multipleOf                         *float64
	minLength, maxLength               *int
	minItems, maxItems                 *int
	uniqueItems                        bool
}

// parseTags parses the description and jsonschema tags of sf. See [Infer]
// for the syntax.
func parseTags(sf reflect.StructField) (*fieldTags, error) {
	ft := &fieldTags{description: sf.Tag.Get("description")}
	tag, ok := sf.Tag.Lookup("jsonschema")
	if !ok || tag == "" {
		return ft, nil
	}
	for tag != "" {
		var item string
		// pattern= takes the rest of the tag, since a regular expression
		// may contain commas.
		if strings.HasPrefix(tag, "pattern=") {
			item, tag = tag, ""
		} else if i := strings.IndexByte(tag, ','); i >= 0 {
			item, tag = tag[:i], tag[i+1:]
		} else {
			item, tag = tag, ""
		}
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		if err := ft.set(key, val, hasVal); err != nil {
			return nil, fmt.Errorf("jsonschema tag %q: %w", item, err)
		}
	}
	return ft, nil
}

func (ft *fieldTags) set(key, val string, hasVal bool) error {
	flag := func(dst *bool) error {
		if hasVal {
			b, err := strconv.ParseBool(val)
			if err != nil {
				return fmt.Errorf("%s takes no value or a boolean", key)
			}
			*dst = b
			return nil
		}
		*dst = true
		return nil
	}
	if !hasVal {
		switch key {
		case "required":
			ft.required = 1
			return nil
		case "optional":
			ft.required = -1
			return nil
		case "uniqueItems":
			ft.uniqueItems = true
			return nil
		case "deprecated":
			ft.deprecated = true
			return nil
		case "readOnly":
			ft.readOnly = true
			return nil
		case "":
			return errors.New("empty item")
		}
		return fmt.Errorf("unknown keyword %q or missing '=value'", key)
	}
	num := func(dst **float64) error {
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%s must be a number, not %q", key, val)
		}
		*dst = &f
		return nil
	}
	count := func(dst **int) error {
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("%s must be a non-negative integer, not %q", key, val)
		}
		*dst = &n
		return nil
	}
	switch key {
	case "title":
		ft.title = val
	case "description":
		ft.description = val
	case "enum":
		ft.enum = strings.Split(val, "|")
	case "default":
		ft.def = &val
	case "example", "examples":
		ft.examples = append(ft.examples, val)
	case "format":
		ft.format = val
	case "pattern":
		if _, err := regexp.Compile(val); err != nil {
			return fmt.Errorf("invalid pattern: %v", err)
		}
		ft.pattern = &val
	case "minimum":
		return num(&ft.minimum)
	case "maximum":
		return num(&ft.maximum)
	case "exclusiveMinimum":
		return num(&ft.exclusiveMinimum)
	case "exclusiveMaximum":
		return num(&ft.exclusiveMaximum)
	case "multipleOf":
		if err := num(&ft.multipleOf); err != nil {
			return err
		}
		if *ft.multipleOf <= 0 {
			return errors.New("multipleOf must be greater than 0")
		}
	case "minLength":
		return count(&ft.minLength)
	case "maxLength":
		return count(&ft.maxLength)
	case "minItems":
		return count(&ft.minItems)
	case "maxItems":
		return count(&ft.maxItems)
	case "uniqueItems":
		return flag(&ft.uniqueItems)
	case "deprecated":
		return flag(&ft.deprecated)
	case "readOnly":
		return flag(&ft.readOnly)
	case "required", "optional":
		var b bool
		if err := flag(&b); err != nil {
			return err
		}
		switch {
		case !b:
			ft.required = 0
		case key == "required":
			ft.required = 1
		default:
			ft.required = -1
		}
	default:
		return fmt.Errorf("unknown keyword %q", key)
	}
	return nil
}

// apply adds the keywords of ft to s, the schema of a field. Keywords for
// strings and numbers given on an array field apply to its items.
func (ft *fieldTags) apply(s *Schema) error {
	if ft.description != "" {
		s.Description = ft.description
	}
	if ft.title != "" {
		s.Title = ft.title
	}
	s.Deprecated = s.Deprecated || ft.deprecated
	s.ReadOnly = s.ReadOnly || ft.readOnly

	target := s // where scalar keywords go
	if isType(s, "array") && s.Items != nil && (ft.enum != nil || ft.format != "" || ft.pattern != nil ||
		ft.minimum != nil || ft.maximum != nil || ft.exclusiveMinimum != nil || ft.exclusiveMaximum != nil ||
		ft.multipleOf != nil || ft.minLength != nil || ft.maxLength != nil) {
		target = s.Items
	}
	numeric := isType(target, "number") || isType(target, "integer")
	str := isType(target, "string")
	needs := func(ok bool, key, what string) error {
		if !ok {
			return fmt.Errorf("%s applies to %s, not to %s", key, what, describeType(target))
		}
		return nil
	}
	if ft.minimum != nil || ft.maximum != nil || ft.exclusiveMinimum != nil || ft.exclusiveMaximum != nil || ft.multipleOf != nil {
		if err := needs(numeric, "minimum/maximum/multipleOf", "numbers"); err != nil {
			return err
		}
		if ft.minimum != nil {
			target.Minimum = ft.minimum
		}
		if ft.maximum != nil {
			target.Maximum = ft.maximum
		}
		if ft.exclusiveMinimum != nil {
			target.ExclusiveMinimum = ft.exclusiveMinimum
		}
		if ft.exclusiveMaximum != nil {
			target.ExclusiveMaximum = ft.exclusiveMaximum
		}
		if ft.multipleOf != nil {
			target.MultipleOf = ft.multipleOf
		}
	}
	if ft.minLength != nil || ft.maxLength != nil || ft.pattern != nil {
		if err := needs(str, "minLength/maxLength/pattern", "strings"); err != nil {
			return err
		}
		if ft.minLength != nil {
			target.MinLength = ft.minLength
		}
		if ft.maxLength != nil {
			target.MaxLength = ft.maxLength
		}
		if ft.pattern != nil {
			target.Pattern = *ft.pattern
		}
	}
	if ft.format != "" {
		target.Format = ft.format
	}
	if ft.minItems != nil || ft.maxItems != nil || ft.uniqueItems {
		if err := needs(isType(s, "array"), "minItems/maxItems/uniqueItems", "arrays"); err != nil {
			return err
		}
		if ft.minItems != nil {
			s.MinItems = ft.minItems
		}
		if ft.maxItems != nil {
			s.MaxItems = ft.maxItems
		}
		s.UniqueItems = s.UniqueItems || ft.uniqueItems
	}
	if ft.enum != nil {
		vals := make([]any, 0, len(ft.enum))
		for _, e := range ft.enum {
			v, err := parseTagValue(target, e)
			if err != nil {
				return fmt.Errorf("enum value %q: %w", e, err)
			}
			vals = append(vals, v)
		}
		if hasType(target, "null") {
			vals = append(vals, jsontext.Value("null"))
		}
		target.Enum = vals
	}
	if ft.def != nil {
		v, err := parseTagValue(s, *ft.def)
		if err != nil {
			return fmt.Errorf("default %q: %w", *ft.def, err)
		}
		s.Default = v
	}
	for _, e := range ft.examples {
		v, err := parseTagValue(s, e)
		if err != nil {
			return fmt.Errorf("example %q: %w", e, err)
		}
		s.Examples = append(s.Examples, v)
	}
	return nil
}

// parseTagValue turns the text of a tag value into JSON for schema s:
// strings are taken verbatim, numbers and booleans are parsed, and any
// other type takes JSON text.
func parseTagValue(s *Schema, text string) (jsontext.Value, error) {
	switch {
	case isType(s, "string"):
		return json.Marshal(text)
	case isType(s, "integer"):
		if !jsontext.Value(text).IsValid() {
			return nil, fmt.Errorf("not an integer")
		}
		if _, err := strconv.ParseInt(text, 10, 64); err != nil {
			if _, err := strconv.ParseUint(text, 10, 64); err != nil {
				return nil, fmt.Errorf("not an integer")
			}
		}
		return jsontext.Value(text), nil
	case isType(s, "number"):
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !jsontext.Value(text).IsValid() {
			return nil, fmt.Errorf("not a number")
		}
		return jsontext.Value(text), nil
	case isType(s, "boolean"):
		b, err := strconv.ParseBool(text)
		if err != nil {
			return nil, fmt.Errorf("not a boolean")
		}
		return json.Marshal(b)
	}
	v := jsontext.Value(text)
	if !v.IsValid() {
		return nil, fmt.Errorf("not valid JSON")
	}
	return v.Clone(), nil
}

// isType reports whether s's (first non-null) type is name.
func isType(s *Schema, name string) bool {
	if s.Type != "" {
		return s.Type == name
	}
	for _, t := range s.Types {
		if t != "null" {
			return t == name
		}
	}
	return false
}

func hasType(s *Schema, name string) bool {
	if len(s.Types) > 0 {
		for _, t := range s.Types {
			if t == name {
				return true
			}
		}
		return false
	}
	return s.Type == name
}

func describeType(s *Schema) string {
	switch {
	case len(s.Types) > 0:
		return strings.Join(s.Types, " or ")
	case s.Type != "":
		return s.Type
	}
	return "values of any type"
}
