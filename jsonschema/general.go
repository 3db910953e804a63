package jsonschema

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
)

// This file delegates what the fast validator does not implement to
// github.com/santhosh-tekuri/jsonschema/v6.

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
	// The fast tokenizer checks the syntax strictly (encoding/json, used
	// by santhosh, accepts duplicate names and invalid UTF-8).
	// It also rejects numbers with huge exponents, which santhosh cannot
	// handle.
	if err := validateFast(anyNode, data); err != nil {
		return err
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return &ValidationError{Problems: []Problem{{Message: "arguments are not valid JSON: " + err.Error()}}}
	}
	err = safeValidate(sch, doc)
	if err == nil {
		return nil
	}
	var ve *sjs.ValidationError
	if !errors.As(err, &ve) {
		return &ValidationError{Problems: []Problem{{Message: "arguments could not be validated: " + err.Error()}}}
	}
	var probs []Problem
	collectProblems(ve, data, &probs)
	if len(probs) == 0 {
		probs = append(probs, Problem{Message: "arguments are invalid: " + ve.Error()})
	}
	if len(probs) > MaxProblems {
		probs = append(probs[:MaxProblems], Problem{Message: "(more problems not shown)"})
	}
	return &ValidationError{Problems: probs}
}

var anyNode = newNode()

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
func collectProblems(e *sjs.ValidationError, data []byte, out *[]Problem) {
	segs, raw := locate(data, e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Reference, *kind.AllOf, *kind.Group:
		for _, c := range e.Causes {
			collectProblems(c, data, out)
		}
		return
	case *kind.AnyOf:
		*out = append(*out, newProblem(segs, "anyOf",
			"must match at least one of the allowed alternatives (anyOf), got "+describeValue(raw)+causes(e, data)))
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			*out = append(*out, newProblem(segs, "oneOf", fmt.Sprintf(
				"must match exactly one of the alternatives (oneOf), but it matches alternatives %d and %d; got %s",
				k.Subschemas[0], k.Subschemas[1], describeValue(raw))))
		} else {
			*out = append(*out, newProblem(segs, "oneOf",
				"must match exactly one of the alternatives (oneOf), got "+describeValue(raw)+causes(e, data)))
		}
	case *kind.Not:
		*out = append(*out, newProblem(segs, "not", "must not match the schema in \"not\", got "+describeValue(raw)))
	case *kind.FalseSchema:
		if len(segs) > 0 && !segs[len(segs)-1].isIndex {
			*out = append(*out, newProblem(segs, "false", "is not allowed"))
		} else {
			*out = append(*out, newProblem(segs, "false", "no value is allowed here"))
		}
	case *kind.Type:
		*out = append(*out, newProblem(segs, "type", "must be of type "+typeNames(k.Want)+", got "+describeValue(raw)))
	case *kind.Enum:
		*out = append(*out, newProblem(segs, "enum", "must be one of "+listAny(k.Want)+", got "+describeValue(raw)))
	case *kind.Const:
		*out = append(*out, newProblem(segs, "const", "must be "+listAny([]any{k.Want})+", got "+describeValue(raw)))
	case *kind.Required:
		for _, m := range k.Missing {
			*out = append(*out, missingProblem(segs, m))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, unknownProblem(segs, p, ""))
		}
	case *kind.Minimum:
		*out = append(*out, newProblem(segs, "minimum", "must be >= "+ratString(k.Want)+", got "+describeValue(raw)))
	case *kind.Maximum:
		*out = append(*out, newProblem(segs, "maximum", "must be <= "+ratString(k.Want)+", got "+describeValue(raw)))
	case *kind.ExclusiveMinimum:
		*out = append(*out, newProblem(segs, "exclusiveMinimum", "must be > "+ratString(k.Want)+", got "+describeValue(raw)))
	case *kind.ExclusiveMaximum:
		*out = append(*out, newProblem(segs, "exclusiveMaximum", "must be < "+ratString(k.Want)+", got "+describeValue(raw)))
	case *kind.MultipleOf:
		*out = append(*out, newProblem(segs, "multipleOf", "must be a multiple of "+ratString(k.Want)+", got "+describeValue(raw)))
	case *kind.MinLength:
		*out = append(*out, newProblem(segs, "minLength", "must be at least "+plural(k.Want, "character", "characters")+
			" long, got "+describeValue(raw)+" ("+plural(k.Got, "character", "characters")+")"))
	case *kind.MaxLength:
		*out = append(*out, newProblem(segs, "maxLength", "must be at most "+plural(k.Want, "character", "characters")+
			" long, got "+plural(k.Got, "character", "characters")+": "+describeValue(raw)))
	case *kind.Pattern:
		*out = append(*out, newProblem(segs, "pattern", "must match the regular expression "+strconv.Quote(k.Want)+", got "+describeValue(raw)))
	case *kind.MinItems:
		*out = append(*out, newProblem(segs, "minItems", "must have at least "+plural(k.Want, "item", "items")+", got "+strconv.Itoa(k.Got)))
	case *kind.MaxItems:
		*out = append(*out, newProblem(segs, "maxItems", "must have at most "+plural(k.Want, "item", "items")+", got "+strconv.Itoa(k.Got)))
	case *kind.UniqueItems:
		*out = append(*out, newProblem(segs, "uniqueItems", fmt.Sprintf("must not contain duplicate items, but items %d and %d are equal", k.Duplicates[0], k.Duplicates[1])))
	case *kind.MinProperties:
		*out = append(*out, newProblem(segs, "minProperties", "must have at least "+plural(k.Want, "member", "members")+", got "+strconv.Itoa(k.Got)))
	case *kind.MaxProperties:
		*out = append(*out, newProblem(segs, "maxProperties", "must have at most "+plural(k.Want, "member", "members")+", got "+strconv.Itoa(k.Got)))
	default:
		kw := ""
		if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
			kw = p[0]
		}
		*out = append(*out, newProblem(segs, kw, e.ErrorKind.LocalizedString(printer)))
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
		var probs []Problem
		collectProblems(c, data, &probs)
		var msgs []string
		for _, p := range probs {
			msgs = append(msgs, p.Message)
		}
		parts = append(parts, strings.Join(msgs, "; "))
	}
	return " (" + strings.Join(parts, " | ") + ")"
}

// locate follows the instance location loc in the valid JSON data and
// returns it as path segments, with the raw value there.
func locate(data []byte, loc []string) ([]pathSeg, []byte) {
	segs := make([]pathSeg, 0, len(loc))
	i := skipSpace(data, 0)
	for _, tok := range loc {
		if i >= len(data) {
			break
		}
		switch data[i] {
		case '[':
			n, err := strconv.Atoi(tok)
			if err != nil {
				return segs, nil
			}
			segs = append(segs, pathSeg{index: n, isIndex: true})
			i = skipSpace(data, i+1)
			for k := 0; k < n; k++ {
				i = skipSpace(data, skipValue(data, i))
				i = skipSpace(data, i+1) // ','
			}
		case '{':
			segs = append(segs, pathSeg{name: tok})
			i = skipSpace(data, i+1)
			found := false
			for i < len(data) && data[i] == '"' {
				end, _, _, _ := scanString(data, i)
				name := string(appendUnescaped(nil, data[i:end]))
				i = skipSpace(data, end)
				i = skipSpace(data, i+1) // ':'
				if name == tok {
					found = true
					break
				}
				i = skipSpace(data, skipValue(data, i))
				if i < len(data) && data[i] == ',' {
					i = skipSpace(data, i+1)
				}
			}
			if !found {
				return segs, nil
			}
		default:
			return segs, nil
		}
	}
	if i >= len(data) {
		return segs, nil
	}
	return segs, data[i:skipValue(data, i)]
}

// skipValue returns the end of the valid JSON value at data[i].
func skipValue(data []byte, i int) int {
	st := state{data: data}
	end, err := st.value(nil, i)
	if err != nil {
		return len(data)
	}
	return end
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
	return listValues(raws)
}

func anyJSON(v any) string {
	b, err := stdjson.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
