// Package full provides a complete JSON Schema implementation
// (github.com/santhosh-tekuri/jsonschema/v6: drafts 4, 6, 7, 2019-09 and
// 2020-12) as a [jsonschema.Engine], for the schemas ferry's built-in
// validator does not handle and to check every schema against its
// dialect's metaschema. Give it where schemas are compiled:
//
//	s := server.New(impl, &server.Options{SchemaEngine: full.Engine{}})
//	v, err := jsonschema.CompileJSON(raw, &jsonschema.CompileOptions{Engine: full.Engine{}})
//
// Migration: this package used to register itself, for every server and
// compilation in the process, when imported for its effect
// (import _ "github.com/ferrymcp/ferry/jsonschema/full"). It no longer
// does: pass full.Engine{} as above.
//
// Schemas inferred from Go types never need it. It costs a few
// milliseconds of start-up and a megabyte or two of memory, which is why
// it is not linked unless asked for.
package full

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/ferrymcp/ferry/jsonschema"
)

// Engine is the complete implementation as a [jsonschema.Engine]. The
// zero value is ready to use.
type Engine struct{}

// Compile compiles a schema document (jsonschema.Engine).
func (Engine) Compile(raw []byte) (func([]byte) error, error) {
	sch, err := compileGeneral(raw)
	if err != nil {
		return nil, err
	}
	return func(instance []byte) error { return validateGeneral(sch, instance) }, nil
}

// schemaURL is the name the document being compiled has for santhosh. A
// relative reference to another document resolves against it and is then
// refused by refusingLoader.
const schemaURL = schemaBase + "schema.json"

const schemaBase = "mem://ferry/"

// refusingLoader refuses every document: references must stay inside the
// schema. The metaschemas of the supported dialects are built into
// santhosh-tekuri/jsonschema and never reach a loader.
type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refusing to load %q: only references within the schema (\"#...\") are supported, and network or file references are never fetched", url)
}

// compileGeneral compiles raw, a schema document, with santhosh.
func compileGeneral(raw []byte) (*sjs.Schema, error) {
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid schema JSON: %w", err)
	}
	c := sjs.NewCompiler()
	c.DefaultDraft(sjs.Draft2020)
	c.UseLoader(refusingLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, cleanCompileError(err)
	}
	return sch, nil
}

// cleanCompileError rewrites santhosh's compilation errors for a reader
// who never named the schema.
func cleanCompileError(err error) error {
	var le *sjs.LoadURLError
	if errors.As(err, &le) {
		return fmt.Errorf("unresolvable $ref to %q: only references within the schema are supported (nothing is fetched)",
			strings.TrimPrefix(le.URL, schemaBase))
	}
	msg := strings.ReplaceAll(err.Error(), schemaURL, "schema")
	msg = strings.ReplaceAll(msg, schemaBase, "")
	return errors.New(msg)
}

var printer = message.NewPrinter(language.English)

// validateGeneral checks data against sch.
func validateGeneral(sch *sjs.Schema, data []byte) error {
	// The syntax was checked strictly by the caller (encoding/json, used
	// by santhosh, accepts duplicate names and invalid UTF-8, and cannot
	// handle numbers with huge exponents).
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &jsonschema.ValidationError{Problems: []jsonschema.Problem{{Message: "arguments are not valid JSON: " + err.Error()}}}
	}
	err = safeValidate(sch, doc)
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return &jsonschema.ValidationError{Problems: []jsonschema.Problem{{Message: "arguments could not be validated: " + err.Error()}}}
	}
	var probs []jsonschema.Problem
	collectProblems(ve, data, &probs)
	if len(probs) == 0 {
		probs = append(probs, jsonschema.Problem{Message: "arguments are invalid: " + ve.Error()})
	}
	if len(probs) > jsonschema.MaxProblems {
		probs = append(probs[:jsonschema.MaxProblems], jsonschema.Problem{Message: "(more problems not shown)"})
	}
	return &jsonschema.ValidationError{Problems: probs}
}

// safeValidate runs santhosh's validation, turning a panic into an error.
func safeValidate(sch *sjs.Schema, doc any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in the validator: %v", r)
		}
	}()
	return sch.Validate(doc)
}

// collectProblems turns the leaves of santhosh's error tree into problems.
func collectProblems(e *sjs.ValidationError, data []byte, out *[]jsonschema.Problem) {
	site := jsonschema.Locate(data, e.InstanceLocation)
	raw := site.Raw
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.AllOf, *kind.Group:
		for _, c := range e.Causes {
			collectProblems(c, data, out)
		}
		return
	case *kind.AnyOf:
		*out = append(*out, site.Problem("anyOf",
			"must match at least one of the allowed alternatives (anyOf), got "+jsonschema.Describe(raw)+causes(e, data)))
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			*out = append(*out, site.Problem("oneOf", fmt.Sprintf(
				"must match exactly one of the alternatives (oneOf), but it matches alternatives %d and %d; got %s",
				k.Subschemas[0], k.Subschemas[1], jsonschema.Describe(raw))))
		} else {
			*out = append(*out, site.Problem("oneOf",
				"must match exactly one of the alternatives (oneOf), got "+jsonschema.Describe(raw)+causes(e, data)))
		}
	case *kind.Not:
		*out = append(*out, site.Problem("not", "must not match the schema in \"not\", got "+jsonschema.Describe(raw)))
	case *kind.FalseSchema:
		if !site.InArray() && len(e.InstanceLocation) > 0 {
			*out = append(*out, site.Problem("false", "is not allowed"))
		} else {
			*out = append(*out, site.Problem("false", "no value is allowed here"))
		}
	case *kind.Type:
		*out = append(*out, site.Problem("type", "must be of type "+jsonschema.TypeNames(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.Enum:
		*out = append(*out, site.Problem("enum", "must be one of "+listAny(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.Const:
		*out = append(*out, site.Problem("const", "must be "+listAny([]any{k.Want})+", got "+jsonschema.Describe(raw)))
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, site.Missing(m))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, site.Unknown(p))
		}
	case *kind.Minimum:
		*out = append(*out, site.Problem("minimum", "must be >= "+ratString(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.Maximum:
		*out = append(*out, site.Problem("maximum", "must be <= "+ratString(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.ExclusiveMinimum:
		*out = append(*out, site.Problem("exclusiveMinimum", "must be > "+ratString(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.ExclusiveMaximum:
		*out = append(*out, site.Problem("exclusiveMaximum", "must be < "+ratString(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.MultipleOf:
		*out = append(*out, site.Problem("multipleOf", "must be a multiple of "+ratString(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.MinLength:
		*out = append(*out, site.Problem("minLength", "must be at least "+jsonschema.Plural(k.Want, "character", "characters")+
			" long, got "+jsonschema.Describe(raw)+" ("+jsonschema.Plural(k.Got, "character", "characters")+")"))
	case *kind.MaxLength:
		*out = append(*out, site.Problem("maxLength", "must be at most "+jsonschema.Plural(k.Want, "character", "characters")+
			" long, got "+jsonschema.Plural(k.Got, "character", "characters")+": "+jsonschema.Describe(raw)))
	case *kind.Pattern:
		*out = append(*out, site.Problem("pattern", "must match the regular expression "+strconv.Quote(k.Want)+", got "+jsonschema.Describe(raw)))
	case *kind.MinItems:
		*out = append(*out, site.Problem("minItems", "must have at least "+jsonschema.Plural(k.Want, "item", "items")+", got "+strconv.Itoa(k.Got)))
	case *kind.MaxItems:
		*out = append(*out, site.Problem("maxItems", "must have at most "+jsonschema.Plural(k.Want, "item", "items")+", got "+strconv.Itoa(k.Got)))
	case *kind.UniqueItems:
		*out = append(*out, site.Problem("uniqueItems", fmt.Sprintf("must not contain duplicate items, but items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])))
	case *kind.MinProperties:
		*out = append(*out, site.Problem("minProperties", "must have at least "+jsonschema.Plural(k.Want, "member", "members")+", got "+strconv.Itoa(k.Got)))
	case *kind.MaxProperties:
		*out = append(*out, site.Problem("maxProperties", "must have at most "+jsonschema.Plural(k.Want, "member", "members")+", got "+strconv.Itoa(k.Got)))
	default:
		kw := ""
		if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = p[0]
		}
		*out = append(*out, site.Problem(kw, e.ErrorKind.LocalizedString(printer)))
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				collectProblems(c, data, out)
			}
		}
	}
}

// causes summarises why the alternatives of an anyOf or oneOf failed.
func causes(e *sjs.ValidationError, data []byte) string {
	if len(e.Causes) == 0 {
		return ""
	}
	var parts []string
	for i, c := range e.Causes {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		var probs []jsonschema.Problem
		collectProblems(c, data, &probs)
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.Message)
		}
		parts = append(parts, strings.Join(msgs, "; "))
	}
	return " (" + strings.Join(parts, " | ") + ")"
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, exact := r.Float64()
	if exact {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return r.RatString()
}

// listAny renders values decoded by santhosh for a message.
func listAny(vals []any) string {
	raws := make([][]byte, 0, len(vals))
	for _, v := range vals {
		raws = append(raws, []byte(anyJSON(v)))
	}
	return jsonschema.ListValues(raws)
}

func anyJSON(v any) string {
	b, err := stdjson.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
