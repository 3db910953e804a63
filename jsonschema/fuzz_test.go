package jsonschema_test

import (
	. "github.com/ferrymcp/ferry/jsonschema"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

type fuzzItem struct {
	Name  string   `json:"name" jsonschema:"minLength=1,maxLength=20,pattern=^[a-z é]+$"`
	Qty   int      `json:"qty" jsonschema:"minimum=0,maximum=1000,multipleOf=5"`
	Price *float64 `json:"price,omitempty" jsonschema:"exclusiveMinimum=0"`
}

type fuzzArgs struct {
	Query   string            `json:"query" jsonschema:"maxLength=64"`
	Mode    string            `json:"mode,omitempty" jsonschema:"enum=fast|slow|1"`
	Limit   uint8             `json:"limit,omitzero"`
	Ratio   float64           `json:"ratio,omitzero" jsonschema:"minimum=-1.5,maximum=1.5"`
	Items   []fuzzItem        `json:"items,omitempty" jsonschema:"maxItems=4"`
	Tags    []string          `json:"tags,omitempty" jsonschema:"uniqueItems"`
	Labels  map[string]int    `json:"labels,omitempty"`
	Extra   any               `json:"extra,omitempty"`
	Next    *fuzzArgs         `json:"next"`
	Options map[string]string `json:"options,omitempty"`
}

// FuzzValidate checks an instance against a fixed inferred schema with the
// fast validator and with santhosh-tekuri/jsonschema: neither may panic,
// both must reject invalid JSON, and on valid JSON they must agree.
func FuzzValidate(f *testing.F) {
	s, err := For[fuzzArgs](nil)
	if err != nil {
		f.Fatal(err)
	}
	v, err := Compile(s, withFull)
	if err != nil {
		f.Fatal(err)
	}
	if v.Engine() != "fast" {
		f.Fatalf("fuzz schema uses the %s engine", v.Engine())
	}
	for _, seed := range []string{
		`{"query":"x","next":null}`,
		`{"query":"x","next":{"query":"y","next":null,"mode":"fast"}}`,
		`{"query":"x","next":null,"items":[{"name":"a b","qty":10,"price":1.5},{"name":"é","qty":0}]}`,
		`{"query":"x","next":null,"tags":["a","b","a"],"labels":{"a":1,"b":2.0}}`,
		`{"query":"x","next":null,"mode":"1","limit":255,"ratio":-1.5}`,
		`{"query":"x","next":null,"limit":256,"ratio":1.5000001,"extra":[{"a":null}]}`,
		`{"query":"x\u00e9\ud83d\ude00","next":null,"options":{"k":"v"}}`,
		`{"query":"x","query":"y","next":null}`,
		`{"query":"x","next":null,"items":[{"name":"a","qty":1e1}]}`,
		`{"query":"x","next":null,"items":[{"name":"a","qty":5.0,"price":0}]}`,
		`[]`, `null`, `"\ud800"`, `{"next":1e999}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fastErr := v.Validate(data)
		generalErr := v.ValidateGeneral(data)
		for _, err := range []error{fastErr, generalErr} {
			if err == nil {
				continue
			}
			if ve, ok := err.(*ValidationError); !ok || len(ve.Problems) == 0 {
				t.Fatalf("error %#v is not a ValidationError with problems", err)
			}
		}
		if !jsontext.Value(data).IsValid() {
			if fastErr == nil {
				t.Fatalf("invalid JSON %q accepted by the fast validator", data)
			}
			if generalErr == nil {
				t.Fatalf("invalid JSON %q accepted through santhosh", data)
			}
			return
		}
		if (fastErr == nil) != (generalErr == nil) {
			t.Fatalf("engines disagree on %q:\nfast: %v\nsanthosh: %v", data, fastErr, generalErr)
		}
	})
}

// FuzzCrossCheck validates instances against the schemas of the shared
// validation table with both engines, which must agree on valid JSON.
func FuzzCrossCheck(f *testing.F) {
	var validators []*Validator
	for _, tc := range validationCases {
		v, err := CompileJSON([]byte(tc.schema), withFull)
		if err != nil {
			f.Fatal(err)
		}
		if v.Engine() == "fast" {
			validators = append(validators, v)
		}
	}
	for i, tc := range validationCases {
		f.Add(uint16(i), []byte(tc.instance))
	}
	f.Fuzz(func(t *testing.T, pick uint16, data []byte) {
		v := validators[int(pick)%len(validators)]
		fastErr := v.Validate(data)
		generalErr := v.ValidateGeneral(data)
		if !jsontext.Value(data).IsValid() {
			if fastErr == nil || generalErr == nil {
				t.Fatalf("invalid JSON %q accepted: fast %v, santhosh %v", data, fastErr, generalErr)
			}
			return
		}
		if (fastErr == nil) != (generalErr == nil) {
			t.Fatalf("engines disagree on %q:\nfast: %v\nsanthosh: %v", data, fastErr, generalErr)
		}
	})
}
