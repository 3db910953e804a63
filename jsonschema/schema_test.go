package jsonschema_test

import (
	. "github.com/ferrymcp/ferry/jsonschema"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func TestSchemaRoundTrip(t *testing.T) {
	docs := []string{
		`true`,
		`false`,
		`{}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":["string","null"],"items":[{"type":"string"}],"additionalItems":false,"dependencies":{"a":["b"]}}`,
		`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer","minimum":1.5},"mid":true},"required":[],"additionalProperties":false}`,
		`{"enum":[1e400,12345678901234567890123,"a",null,{"b":[1]}],"const":null,"default":{"x":1},"examples":[1,"two"]}`,
		`{"$defs":{"n":{"$ref":"#"}},"anyOf":[{"$ref":"#/$defs/n"},false],"x-mcp-header":"X-Region","x-vendor":{"deep":[1,2]}}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","exclusiveMinimum":true,"minimum":0,"minLength":2.0}`,
	}
	for _, doc := range docs {
		var s Schema
		if err := json.Unmarshal([]byte(doc), &s); err != nil {
			t.Errorf("Unmarshal(%s): %v", doc, err)
			continue
		}
		got, err := json.Marshal(&s)
		if err != nil {
			t.Errorf("Marshal(%s): %v", doc, err)
			continue
		}
		if !equalJSON(t, got, []byte(doc)) {
			t.Errorf("round trip of %s gave %s", doc, got)
		}
		// Clone copies everything.
		got2, err := json.Marshal(s.Clone())
		if err != nil || string(got2) != string(got) {
			t.Errorf("clone of %s marshals to %s (%v)", doc, got2, err)
		}
	}
}

func TestSchemaPropertyOrder(t *testing.T) {
	var s Schema
	if err := json.Unmarshal([]byte(`{"properties":{"z":{},"a":{},"m":{}}}`), &s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.PropertyOrder, ","); got != "z,a,m" {
		t.Errorf("PropertyOrder = %s", got)
	}
	// Names missing from PropertyOrder follow in sorted order.
	s.Properties["b"] = True()
	s.PropertyOrder = []string{"m"}
	got, _ := json.Marshal(&s)
	if want := `{"properties":{"m":{},"a":{},"b":true,"z":{}}}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestBooleanSchemas(t *testing.T) {
	if !False().IsFalse() || False().IsTrue() || !True().IsTrue() || (&Schema{}).IsTrue() {
		t.Error("boolean schema predicates")
	}
	got, _ := json.Marshal(&Schema{Type: "object", AdditionalProperties: False(), Items: True()})
	if want := `{"type":"object","items":true,"additionalProperties":false}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func equalJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	ca, cb := jsontext.Value(append([]byte(nil), a...)), jsontext.Value(append([]byte(nil), b...))
	if err := ca.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	if err := cb.Canonicalize(); err != nil {
		t.Fatal(err)
	}
	return string(ca) == string(cb)
}
