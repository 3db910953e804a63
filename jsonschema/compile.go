package jsonschema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
)

// Validator checks JSON instances against a compiled schema. It is safe
// for concurrent use.
type Validator struct {
	fast    *node                   // the fast validator's program, when the schema fits it
	general func(data []byte) error // the given Engine's, when there is one
}

// Compile prepares s for validation. The schema must be valid for its
// dialect (2020-12 unless s.Schema names another one) and stay within the
// bounds described in the package documentation. opts may be nil.
func Compile(s *Schema, opts *CompileOptions) (*Validator, error) {
	if s == nil {
		return nil, errors.New("jsonschema: Compile: nil schema")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: Compile: %w", err)
	}
	v, err := compile(s, raw, opts)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: Compile: %w", err)
	}
	return v, nil
}

// CompileJSON prepares the schema document raw for validation. raw may
// come from an untrusted peer: it must be a valid schema of a supported
// dialect, refer to nothing outside itself and stay within the bounds
// described in the package documentation. opts may be nil.
func CompileJSON(raw []byte, opts *CompileOptions) (*Validator, error) {
	s := new(Schema)
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("jsonschema: CompileJSON: invalid schema JSON: %w", err)
	}
	v, err := compile(s, raw, opts)
	if err != nil {
		return nil, fmt.Errorf("jsonschema: CompileJSON: %w", err)
	}
	return v, nil
}

func compile(s *Schema, raw []byte, opts *CompileOptions) (*Validator, error) {
	if err := checkBounds(s); err != nil {
		return nil, err
	}
	dialect, err := dialectOf(s.Schema)
	if err != nil {
		return nil, err
	}
	v := &Validator{}
	if opts != nil && opts.Engine != nil {
		// The engine also checks the schema against its metaschema.
		if v.general, err = opts.Engine.Compile(raw); err != nil {
			return nil, err
		}
	}
	if dialect == dialect2020 || dialect == dialect7 {
		if fast, err := compileFast(s, dialect == dialect7); err == nil {
			v.fast = fast
		}
	}
	if v.fast == nil && v.general == nil {
		return nil, ErrNoEngine
	}
	return v, nil
}

// Validate checks the JSON instance. It returns nil when the instance is
// valid and a [*ValidationError] otherwise, including when instance is not
// exactly one valid JSON value (RFC 8259, valid UTF-8, no duplicate object
// member names).
func (v *Validator) Validate(instance []byte) error {
	if v.fast != nil {
		return validateFast(v.fast, instance)
	}
	if err := CheckSyntax(instance); err != nil {
		return err
	}
	return v.general(instance)
}

// ValidateTrusted is [Validator.Validate] for an instance already known to
// be strictly valid JSON (taken from a message that jsonrpc.Decode
// accepted, for example): its strings are not checked again for control
// characters and UTF-8, which makes long strings cheaper to validate.
func (v *Validator) ValidateTrusted(instance []byte) error {
	if v.fast != nil {
		return validateFastMode(v.fast, instance, true)
	}
	return v.general(instance)
}

// ValidateGeneral checks instance with the given [Engine] alone, even
// when the built-in validator handles the schema: for cross-checking the
// two. It returns [ErrNoEngine] when v was compiled without an engine.
func (v *Validator) ValidateGeneral(instance []byte) error {
	if v.general == nil {
		return ErrNoEngine
	}
	if err := CheckSyntax(instance); err != nil {
		return err
	}
	return v.general(instance)
}

// Engine names the engine that validates for v: "fast" for this package's
// own validator, "general" for the given [Engine]. It is for
// diagnostics and benchmarks.
func (v *Validator) Engine() string {
	if v.fast != nil {
		return "fast"
	}
	return "general"
}

type dialect int

const (
	dialect2020 dialect = iota
	dialect2019
	dialect7
	dialect6
	dialect4
)

// dialectOf maps a "$schema" value to a dialect, as santhosh-tekuri/jsonschema
// does, rejecting the dialects it does not know.
func dialectOf(schema string) (dialect, error) {
	if schema == "" {
		return dialect2020, nil
	}
	u, frag, _ := strings.Cut(schema, "#")
	if frag == "" {
		u, ok := strings.CutPrefix(u, "http://")
		if !ok {
			u, _ = strings.CutPrefix(u, "https://")
		}
		switch u {
		case "json-schema.org/schema", "json-schema.org/draft/2020-12/schema":
			return dialect2020, nil
		case "json-schema.org/draft/2019-09/schema":
			return dialect2019, nil
		case "json-schema.org/draft-07/schema":
			return dialect7, nil
		case "json-schema.org/draft-06/schema":
			return dialect6, nil
		case "json-schema.org/draft-04/schema":
			return dialect4, nil
		}
	}
	return 0, fmt.Errorf("unsupported JSON Schema dialect %q: supported are 2020-12 (the default), 2019-09, draft-07, draft-06 and draft-04", schema)
}
