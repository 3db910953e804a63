package protocol

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestElicitDefaults(t *testing.T) {
	p := &ElicitParams{Message: "?", RequestedSchema: jsontext.Value(`{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive"],"default":"active"},
		"verified":{"type":"boolean","default":true},
		"tags":{"type":"array","items":{"type":"string"},"default":["a","b"]},
		"plain":{"type":"string"}},"required":[]}`)}
	got, err := p.Defaults()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "John Doe", "age": int64(30), "score": 95.5, "status": "active", "verified": true, "tags": []any{"a", "b"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Defaults() = %#v, want %#v", got, want)
	}
	if got, err := (&ElicitParams{}).Defaults(); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("no schema: %v, %v", got, err)
	}
	if _, err := (&ElicitParams{RequestedSchema: jsontext.Value(`[1]`)}).Defaults(); err == nil {
		t.Fatal("an array schema gave no error")
	}
}
