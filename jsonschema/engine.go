package jsonschema

import (
	"errors"
	"strconv"

	"github.com/ferrymcp/ferry/internal/jsonfast"
)

// An Engine is a complete JSON Schema implementation, for the schemas the
// built-in validator does not handle (composition and conditional
// keywords, dynamic references, dialects other than 2020-12 and
// draft-07), and to check every schema against its dialect's metaschema.
//
// The package github.com/ferrymcp/ferry/jsonschema/full provides one
// (santhosh-tekuri/jsonschema), given to a compilation by
// [CompileOptions] (or to a server by server.Options.SchemaEngine). It
// is separate because that implementation prepares its metaschemas when
// the program starts, which costs a few milliseconds and a megabyte or two
// to every program that links it, while the schemas inferred from Go types
// never need it.
type Engine interface {
	// Compile compiles a schema document and returns the function that
	// validates instances with it. The instance given to that function is
	// already known to be strictly valid JSON.
	Compile(raw []byte) (validate func(instance []byte) error, err error)
}

// CompileOptions configure [Compile] and [CompileJSON]. The zero value
// (or nil) compiles with the built-in validator alone.
type CompileOptions struct {
	// Engine, when set, validates the schemas the built-in validator does
	// not handle, and checks every schema against its dialect's
	// metaschema. jsonschema/full's Engine is one.
	Engine Engine
}

// ErrNoEngine reports a schema that needs an [Engine] when none was
// given.
var ErrNoEngine = errors.New("this schema uses JSON Schema features beyond the built-in validator; " +
	"give it the engine of github.com/ferrymcp/ferry/jsonschema/full (full.Engine{} in server.Options.SchemaEngine or jsonschema.CompileOptions.Engine) to validate it")

// CheckSyntax checks that instance is exactly one strictly valid JSON value
// (RFC 8259, valid UTF-8, no duplicate member names), as [Validator.Validate]
// requires. Engines call it before decoding an instance their own way.
func CheckSyntax(instance []byte) error { return validateFast(anyNode, instance) }

var anyNode = newNode()

// Site is a place in a JSON instance, for an [Engine] reporting problems
// in the words the built-in validator uses.
type Site struct {
	segs []pathSeg
	// Raw is the value at the site, or nil when it could not be found.
	Raw []byte
}

// Locate follows an instance location (JSON Pointer tokens) in valid JSON.
func Locate(instance []byte, tokens []string) Site {
	segs, raw := locate(instance, tokens)
	return Site{segs: segs, Raw: raw}
}

// Problem reports that the value at the site breaks a keyword.
func (s Site) Problem(keyword, detail string) Problem { return newProblem(s.segs, keyword, detail) }

// Missing reports a missing required member of the object at the site.
func (s Site) Missing(name string) Problem { return missingProblem(s.segs, name) }

// Unknown reports a member the object at the site may not have.
func (s Site) Unknown(name string) Problem { return unknownProblem(s.segs, name, "") }

// InArray reports whether the site is an element of an array.
func (s Site) InArray() bool { return len(s.segs) > 0 && s.segs[len(s.segs)-1].isIndex }

// Describe renders a raw JSON value for a problem message (truncated).
func Describe(raw []byte) string { return describeValue(raw) }

// ListValues renders raw JSON values for a problem message.
func ListValues(vals [][]byte) string { return listValues(vals) }

// TypeNames renders JSON types for a problem message.
func TypeNames(names []string) string { return typeNames(names) }

// Plural renders a count with its noun.
func Plural(n int, one, many string) string { return plural(n, one, many) }

// locate follows the instance location loc in the valid JSON data and
// returns it as path segments, with the raw value there.
func locate(data []byte, loc []string) ([]pathSeg, []byte) {
	segs := make([]pathSeg, 0, len(loc))
	i := jsonfast.SkipSpace(data, 0)
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
			i = jsonfast.SkipSpace(data, i+1)
			for k := 0; k < n; k++ {
				i = jsonfast.SkipSpace(data, skipValue(data, i))
				i = jsonfast.SkipSpace(data, i+1) // ','
			}
		case '{':
			segs = append(segs, pathSeg{name: tok})
			i = jsonfast.SkipSpace(data, i+1)
			found := false
			for i < len(data) && data[i] == '"' {
				end, _, _, _ := jsonfast.ScanString(data, i, jsonfast.CountRunes)
				name := string(jsonfast.AppendUnescaped(nil, data[i:end]))
				i = jsonfast.SkipSpace(data, end)
				i = jsonfast.SkipSpace(data, i+1) // ':'
				if name == tok {
					found = true
					break
				}
				i = jsonfast.SkipSpace(data, skipValue(data, i))
				if i < len(data) && data[i] == ',' {
					i = jsonfast.SkipSpace(data, i+1)
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
