// Package jsonschema infers JSON Schemas from Go types and validates JSON
// instances (tool arguments and structured results) against schemas.
//
// # Inference
//
// [Infer] and [For] turn a Go type into a JSON Schema 2020-12 document
// ([Schema]). The rules follow how github.com/go-json-experiment/json (json
// v2) marshals the type, so that whatever the schema accepts unmarshals
// into the type: see [Infer] for the mapping and [InferOptions] for the
// knobs, and the struct tags `description:"..."` and `jsonschema:"..."`
// described at [Infer].
//
// # Validation
//
// [Compile] and [CompileJSON] prepare a schema for validation and
// [Validator.Validate] checks one JSON instance given as raw bytes.
//
// Two engines sit behind a [Validator]. Schemas that use only a simple,
// common subset of JSON Schema (everything [Infer] produces, plus most
// hand-written tool schemas) are validated by a fast validator of this
// package that walks the raw JSON bytes once, without decoding the instance
// into Go values and without copying strings. Any other schema is delegated
// to github.com/santhosh-tekuri/jsonschema/v6, which implements the whole
// of JSON Schema drafts 4, 6, 7, 2019-09 and 2020-12. Both engines report
// failures as a [*ValidationError] whose [Problem] messages are written to
// be read by a language model: they name the argument, the rule and the
// offending value. [Validator.Engine] tells which engine a schema got.
//
// The fast subset, for 2020-12 and draft-07 schemas: type, enum, const,
// minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf,
// minLength, maxLength, pattern, items, prefixItems (2020-12), minItems,
// maxItems, uniqueItems, properties, required, additionalProperties,
// minProperties, maxProperties, boolean schemas, "$ref" to "#",
// "#/$defs/name" or "#/definitions/name", "anyOf": [X, {"type": "null"}],
// and annotations (title, description, default, examples, deprecated,
// readOnly, writeOnly, contentEncoding, contentMediaType, $comment, and
// format, which 2020-12 makes an annotation; draft-07 schemas using format
// go to the general engine, which asserts it as draft-07 asks). Keywords
// unknown to the dialect are ignored by both engines.
//
// Numbers are compared exactly (as decimals, not float64), string lengths
// are counted in Unicode code points, and regular expressions use Go's
// regexp syntax (RE2) in both engines. Instances must be strict JSON: one
// value, valid UTF-8, no lone surrogate escapes, no duplicate member names.
// Numbers with an exponent beyond ±1000 (such as 1e999999) are rejected,
// as computing with them exactly is unreasonably costly and no Go number
// holds them.
//
// # Dialects and references
//
// A schema without "$schema" is JSON Schema 2020-12, as MCP requires. A
// "$schema" naming draft-04, draft-06, draft-07 or 2019-09 selects that
// dialect; any other "$schema" is rejected as an unsupported dialect.
// References ("$ref") must be local to the document ("#", "#/$defs/name",
// a JSON pointer or an anchor): nothing is ever fetched from the network or
// the file system, and a reference to another document makes compilation
// fail.
//
// # Resource bounds
//
// Schemas given to [CompileJSON] may come from an untrusted peer. Compiling
// fails when a schema has more than [MaxSubschemas] subschemas or nests
// deeper than [MaxSchemaDepth], or when its in-place applicators
// (allOf/anyOf/oneOf/not/if/then/else/$ref) could make one instance
// location be checked against more than [MaxExpansion] subschemas.
package jsonschema
