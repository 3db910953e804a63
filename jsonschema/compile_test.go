package jsonschema_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	. "github.com/ferrymcp/ferry/jsonschema"
	"github.com/ferrymcp/ferry/jsonschema/full"
)

func TestCompileErrors(t *testing.T) {
	deep := strings.Repeat(`{"items":`, MaxSchemaDepth+1) + `{}` + strings.Repeat(`}`, MaxSchemaDepth+1)
	var wide strings.Builder
	wide.WriteString(`{"properties":{`)
	for i := range MaxSubschemas + 1 {
		if i > 0 {
			wide.WriteByte(',')
		}
		fmt.Fprintf(&wide, `"p%d":{}`, i)
	}
	wide.WriteString(`}}`)
	// Each definition refers twice to the next: 2^40 paths.
	var doubling strings.Builder
	doubling.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 40 {
		fmt.Fprintf(&doubling, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	doubling.WriteString(`"d40":{"type":"string"}}}`)

	tests := []struct {
		schema string
		want   string
	}{
		{`{"$ref":"https://example.com/schema.json"}`, "only references within the schema"},
		{`{"$ref":"other.json#/x"}`, "only references within the schema"},
		{`{"$id":"https://example.com/root.json","$ref":"other.json"}`, "only references within the schema"},
		{`{"$ref":"file:///etc/passwd"}`, "only references within the schema"},
		{`{"$ref":"#/$defs/missing"}`, "$defs/missing"},
		{`{"$schema":"https://example.com/my-dialect","type":"string"}`, "unsupported JSON Schema dialect"},
		{`{"$schema":"http://json-schema.org/draft-03/schema#"}`, "unsupported JSON Schema dialect"},
		{`{"type":"strin"}`, "strin"},
		{`{"minLength":-1}`, "minLength"},
		{`{"pattern":"("}`, "pattern"},
		{`{"multipleOf":0}`, "multipleOf"},
		{`{"properties":{"a":1}}`, "a JSON Schema must be an object or a boolean"},
		{`[]`, "a JSON Schema must be an object or a boolean"},
		{`{"type":"string","type":"integer"}`, "duplicate"},
		{`{`, "invalid schema JSON"},
		{deep, "schema too deep"},
		{wide.String(), "schema too large"},
		{doubling.String(), "schema too expensive"},
	}
	for _, tt := range tests {
		_, err := CompileJSON([]byte(tt.schema), withFull)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			name := tt.schema
			if len(name) > 80 {
				name = name[:80]
			}
			t.Errorf("CompileJSON(%s): error %v, want one containing %q", name, err, tt.want)
		}
	}
}

func TestCompileAccepts(t *testing.T) {
	for _, schema := range []string{
		`{"$id":"https://example.com/root.json","$defs":{"a":{"type":"string"}},"$ref":"#/$defs/a"}`,
		`{"$defs":{"a":{"$anchor":"thing","type":"string"}},"$ref":"#thing"}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-06/schema#","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object"}`,
		// Legitimate recursion does not count as expensive.
		`{"$defs":{"n":{"properties":{"l":{"$ref":"#/$defs/n"},"r":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		strings.Repeat(`{"items":`, MaxSchemaDepth-1) + `{}` + strings.Repeat(`}`, MaxSchemaDepth-1),
	} {
		if _, err := CompileJSON([]byte(schema), withFull); err != nil {
			t.Errorf("CompileJSON(%.80s): %v", schema, err)
		}
	}
}

func TestAnchorRef(t *testing.T) {
	v, err := CompileJSON([]byte(`{"$defs":{"a":{"$anchor":"thing","type":"string"}},"properties":{"x":{"$ref":"#thing"}}}`), withFull)
	if err != nil {
		t.Fatal(err)
	}
	if v.Engine() != "general" {
		t.Errorf("anchor references use the %s engine", v.Engine())
	}
	if err := v.Validate([]byte(`{"x":1}`)); err == nil || !strings.Contains(err.Error(), `argument "x": must be of type string`) {
		t.Errorf("got %v", err)
	}
}

func TestDraft07RefSiblingsIgnored(t *testing.T) {
	v, err := CompileJSON([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","minLength":5}}}`), withFull)
	if err != nil {
		t.Fatal(err)
	}
	if v.Engine() != "fast" {
		t.Errorf("engine %s", v.Engine())
	}
	if err := v.Validate([]byte(`{"a":"x"}`)); err != nil {
		t.Errorf("draft-07 applied a sibling of $ref: %v", err)
	}
	if err := v.Validate([]byte(`{"a":1}`)); err == nil {
		t.Error("draft-07 $ref not applied")
	}
}

func TestCompileInferredUsesFastEngine(t *testing.T) {
	for _, s := range []func() (*Schema, error){
		func() (*Schema, error) { return For[weatherArgs](nil) },
		func() (*Schema, error) { return For[composite](nil) },
		func() (*Schema, error) { return For[scalars](nil) },
		func() (*Schema, error) { return For[holder](nil) },
	} {
		sch, err := s()
		if err != nil {
			t.Fatal(err)
		}
		v, err := Compile(sch, withFull)
		if err != nil {
			t.Fatal(err)
		}
		if v.Engine() != "fast" {
			t.Errorf("inferred schema uses the %s engine:\n%s", v.Engine(), sch)
		}
	}
}

// withFull compiles with the complete engine, as every test here does.
var withFull = &CompileOptions{Engine: full.Engine{}}

// Without an engine, a schema beyond the built-in validator is refused
// with ErrNoEngine, which says where the engine is.
func TestCompileWithoutEngine(t *testing.T) {
	schema := []byte(`{"anyOf":[{"required":["a"]},{"required":["b"]}]}`)
	if _, err := CompileJSON(schema, nil); !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "jsonschema/full") {
		t.Errorf("CompileJSON without an engine: %v", err)
	}
	if v, err := CompileJSON(schema, withFull); err != nil || v.Engine() != "general" {
		t.Errorf("CompileJSON with the full engine: %v", err)
	}
	if v, err := CompileJSON([]byte(`{"type":"object"}`), nil); err != nil || v.Engine() != "fast" {
		t.Errorf("CompileJSON of a simple schema without an engine: %v", err)
	}
}
