package jsonschema_test

import (
	"fmt"
	. "github.com/ferrymcp/ferry/jsonschema"
	"strings"
	"testing"
)

// validationCase is one (schema, instance, valid?) triple. Every case runs
// through both engines, which must agree with valid.
type validationCase struct {
	schema   string
	instance string
	valid    bool
}

var validationCases = []validationCase{
	// type
	{`{"type":"string"}`, `"x"`, true},
	{`{"type":"string"}`, `1`, false},
	{`{"type":"integer"}`, `1`, true},
	{`{"type":"integer"}`, `1.0`, true},
	{`{"type":"integer"}`, `1e2`, true},
	{`{"type":"integer"}`, `1.5e1`, true},
	{`{"type":"integer"}`, `1.05e1`, false},
	{`{"type":"integer"}`, `-0`, true},
	{`{"type":"integer"}`, `0.0000`, true},
	{`{"type":"integer"}`, `1.5`, false},
	{`{"type":"integer"}`, `12345678901234567890123456789`, true},
	{`{"type":"integer"}`, `1e-400`, false},
	{`{"type":"integer"}`, `"1"`, false},
	{`{"type":"number"}`, `1.5`, true},
	{`{"type":"number"}`, `true`, false},
	{`{"type":"boolean"}`, `false`, true},
	{`{"type":"boolean"}`, `null`, false},
	{`{"type":"null"}`, `null`, true},
	{`{"type":"null"}`, `0`, false},
	{`{"type":"object"}`, `{}`, true},
	{`{"type":"object"}`, `[]`, false},
	{`{"type":"array"}`, `[]`, true},
	{`{"type":"array"}`, `{"a":[]}`, false},
	{`{"type":["string","null"]}`, `null`, true},
	{`{"type":["string","null"]}`, `"a"`, true},
	{`{"type":["string","null"]}`, `0`, false},
	{`{"type":["number","integer"]}`, `0.5`, true},
	// enum and const
	{`{"enum":["c","f"]}`, `"c"`, true},
	{`{"enum":["c","f"]}`, `"k"`, false},
	{`{"enum":["c","f"]}`, `"\u0063"`, true},
	{`{"enum":["a\"b"]}`, `"a\"b"`, true},
	{`{"enum":["a\"b"]}`, `"a\u0022b"`, true},
	{`{"enum":[1,2]}`, `1.0`, true},
	{`{"enum":[1,2]}`, `10e-1`, true},
	{`{"enum":[1,2]}`, `3`, false},
	{`{"enum":[null,false]}`, `null`, true},
	{`{"enum":[null,false]}`, `0`, false},
	{`{"enum":[{"a":1,"b":[1,2]}]}`, `{"b":[1.0,2],"a":1}`, true},
	{`{"enum":[{"a":1,"b":[1,2]}]}`, `{"b":[2,1],"a":1}`, false},
	{`{"enum":["a","b","c","d","e","f","g","h","i","j"]}`, `"j"`, true},
	{`{"enum":["a","b","c","d","e","f","g","h","i","j"]}`, `"k"`, false},
	{`{"const":"x"}`, `"x"`, true},
	{`{"const":"x"}`, `"y"`, false},
	{`{"const":null}`, `null`, true},
	{`{"const":null}`, `false`, false},
	{`{"const":[1,{"a":null}]}`, `[1,{"a":null}]`, true},
	// numbers
	{`{"minimum":1}`, `1`, true},
	{`{"minimum":1}`, `0.9999999999999999999999`, false},
	{`{"minimum":1}`, `"0"`, true},
	{`{"maximum":1}`, `1.0000000000000000000001`, false},
	{`{"maximum":1}`, `1`, true},
	{`{"exclusiveMinimum":0}`, `0`, false},
	{`{"exclusiveMinimum":0}`, `1e-400`, true},
	{`{"exclusiveMinimum":0}`, `-0`, false},
	{`{"exclusiveMaximum":10}`, `10`, false},
	{`{"exclusiveMaximum":10}`, `9.99`, true},
	{`{"minimum":0.1}`, `0.1`, true},
	{`{"minimum":0.1}`, `0.09999999999999999`, false},
	{`{"maximum":-1.5}`, `-1.5`, true},
	{`{"maximum":-1.5}`, `-1.4`, false},
	{`{"maximum":1e308}`, `1e309`, false},
	{`{"minimum":-1e308}`, `-1e999999999999`, false},
	{`{"maximum":0}`, `-1e999999999999`, false}, // exponent out of range
	{`{}`, `[1e1000, 1E-1000, 1e+1000]`, true},
	{`{}`, `{"a":[1e1001]}`, false},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `-3`, true},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `0`, true},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `3.0`, true},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `6`, false},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `-6`, false},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `2`, false},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `-999999999999999999`, false},
	{`{"minimum":-3,"maximum":3,"multipleOf":3}`, `-9999999999999999999`, false},
	{`{"exclusiveMinimum":-1,"exclusiveMaximum":1}`, `-1`, false},
	{`{"exclusiveMinimum":-1,"exclusiveMaximum":1}`, `0`, true},
	{`{"exclusiveMinimum":-1,"exclusiveMaximum":1}`, `1`, false},
	{`{"maximum":1e18}`, `1000000000000000000`, true},
	{`{"maximum":1e18}`, `1000000000000000001`, false},
	{`{"maximum":9007199254740993}`, `9007199254740993`, true},
	{`{"multipleOf":0.1}`, `0.3`, true},
	{`{"multipleOf":0.1}`, `0.35`, false},
	{`{"multipleOf":2}`, `7`, false},
	{`{"multipleOf":2}`, `1e300`, true},
	{`{"multipleOf":3}`, `1e300`, false},
	{`{"multipleOf":3}`, `3e30`, true},
	{`{"multipleOf":0.01}`, `19.99`, true},
	{`{"multipleOf":7}`, `123456789012345678901234567890`, true},
	{`{"multipleOf":7}`, `123456789012345678901234567891`, false},
	{`{"multipleOf":1.5}`, `4.5`, true},
	{`{"multipleOf":1e-10}`, `1`, true},
	{`{"multipleOf":1e-10}`, `1e-11`, false},
	// strings
	{`{"minLength":2}`, `"ab"`, true},
	{`{"minLength":2}`, `"a"`, false},
	{`{"minLength":2}`, `"é"`, false},
	{`{"maxLength":2}`, `"éé"`, true},
	{`{"maxLength":2}`, `"\u00e9\u00e9"`, true},
	{`{"maxLength":1}`, `"\ud83d\ude00"`, true},
	{`{"maxLength":1}`, `"😀"`, true},
	{`{"maxLength":1}`, `"\n\t"`, false},
	{`{"maxLength":3}`, `12345`, true},
	{`{"pattern":"^[a-z]+$"}`, `"abc"`, true},
	{`{"pattern":"^[a-z]+$"}`, `"aBc"`, false},
	{`{"pattern":"b"}`, `"abc"`, true},
	{`{"pattern":"^a\nb$"}`, `"a\nb"`, true},
	{`{"pattern":"^a/b$"}`, `"a\/b"`, true},
	{`{"format":"email"}`, `"not an email"`, true},
	{`{"format":"date-time"}`, `"yesterday"`, true},
	// arrays
	{`{"items":{"type":"integer"}}`, `[1,2,3]`, true},
	{`{"items":{"type":"integer"}}`, `[1,"2",3]`, false},
	{`{"items":{"type":"integer"}}`, `{"a":"b"}`, true},
	{`{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `["a",1,null]`, true},
	{`{"prefixItems":[{"type":"string"},{"type":"integer"}]}`, `[1]`, false},
	{`{"prefixItems":[{"type":"string"}],"items":false}`, `["a"]`, true},
	{`{"prefixItems":[{"type":"string"}],"items":false}`, `["a",1]`, false},
	{`{"minItems":1}`, `[]`, false},
	{`{"maxItems":1}`, `[1,2]`, false},
	{`{"maxItems":1}`, `[[1,2]]`, true},
	{`{"uniqueItems":true}`, `[1,2,3]`, true},
	{`{"uniqueItems":true}`, `[1,2,1.0]`, false},
	{`{"uniqueItems":true}`, `[{"a":1,"b":2},{"b":2,"a":1}]`, false},
	{`{"uniqueItems":true}`, `[[1],[1,1]]`, true},
	{`{"uniqueItems":true}`, `["a","\u0061"]`, false},
	{`{"uniqueItems":true}`, `[0,false,null,"",[],{}]`, true},
	{`{"uniqueItems":false}`, `[1,1]`, true},
	// objects
	{`{"properties":{"a":{"type":"string"}}}`, `{"a":"x","b":1}`, true},
	{`{"properties":{"a":{"type":"string"}}}`, `{"a":1}`, false},
	{`{"properties":{"a":{"type":"string"}}}`, `{"\u0061":1}`, false},
	{`{"properties":{"a b":{"type":"string"}}}`, `{"a b":"1"}`, true},
	{`{"required":["a"]}`, `{"a":null}`, true},
	{`{"required":["a"]}`, `{"b":null}`, false},
	{`{"required":["a"]}`, `[]`, true},
	{`{"properties":{"a":{}},"required":["a","b"]}`, `{"a":1}`, false},
	{`{"properties":{"a":{}},"required":["a","b"],"additionalProperties":false}`, `{"a":1,"b":2}`, false},
	{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1}`, true},
	{`{"properties":{"a":{}},"additionalProperties":false}`, `{"a":1,"c":2}`, false},
	{`{"additionalProperties":{"type":"integer"}}`, `{"a":1,"b":2}`, true},
	{`{"additionalProperties":{"type":"integer"}}`, `{"a":1,"b":"2"}`, false},
	{`{"properties":{"a":false}}`, `{"a":1}`, false},
	{`{"properties":{"a":false}}`, `{}`, true},
	{`{"minProperties":1}`, `{}`, false},
	{`{"maxProperties":1}`, `{"a":1,"b":2}`, false},
	{`{"maxProperties":1}`, `{"a":{"b":1,"c":2}}`, true},
	// nesting
	{`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"]}}},"required":["items"]}`,
		`{"items":[{"n":1},{"n":2},{"n":-3}]}`, false},
	{`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"]}}},"required":["items"]}`,
		`{"items":[{"n":1},{"n":2},{"n":3}]}`, true},
	// references
	{`{"$defs":{"pos":{"type":"integer","minimum":0}},"properties":{"a":{"$ref":"#/$defs/pos"}}}`, `{"a":1}`, true},
	{`{"$defs":{"pos":{"type":"integer","minimum":0}},"properties":{"a":{"$ref":"#/$defs/pos"}}}`, `{"a":-1}`, false},
	{`{"$defs":{"pos":{"type":"integer","minimum":0}},"properties":{"a":{"$ref":"#/$defs/pos","maximum":5}}}`, `{"a":6}`, false},
	{`{"properties":{"name":{"type":"string"},"kids":{"items":{"$ref":"#"}}},"additionalProperties":false}`, `{"name":"a","kids":[{"name":"b","kids":[{"name":"c"}]}]}`, true},
	{`{"properties":{"name":{"type":"string"},"kids":{"items":{"$ref":"#"}}},"additionalProperties":false}`, `{"name":"a","kids":[{"name":"b","kids":[{"name":3}]}]}`, false},
	{`{"$defs":{"a/b":{"type":"string"}},"$ref":"#/$defs/a~1b"}`, `"x"`, true},
	{`{"$defs":{"a/b":{"type":"string"}},"$ref":"#/$defs/a~1b"}`, `1`, false},
	// boolean schemas
	{`true`, `{"anything":[1,2]}`, true},
	{`false`, `null`, false},
	{`{"items":false}`, `[]`, true},
	{`{"items":false}`, `[1]`, false},
	// nullable references
	{`{"$defs":{"a":{"type":"object","required":["x"]}},"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}`, `null`, true},
	{`{"$defs":{"a":{"type":"object","required":["x"]}},"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}`, `{"x":1}`, true},
	{`{"$defs":{"a":{"type":"object","required":["x"]}},"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}`, `{"y":1}`, false},
	{`{"$defs":{"a":{"type":"object","required":["x"]}},"anyOf":[{"$ref":"#/$defs/a"},{"type":"null"}]}`, `1`, false},
	{`{"anyOf":[{"type":"null"},{"type":"integer"}]}`, `null`, true},
	{`{"anyOf":[{"type":"null"},{"type":"integer"}]}`, `2`, true},
	{`{"anyOf":[{"type":"null"},{"type":"integer"}]}`, `"2"`, false},
	{`{"anyOf":[{"type":"null"},{"const":null}]}`, `null`, true},
	{`{"anyOf":[{"type":"null"},{"const":null}]}`, `0`, false},
	// unknown keywords are ignored
	{`{"type":"string","x-mcp-header":"X-Thing","nonsense":{"type":"integer"}}`, `"a"`, true},
	// the general engine
	{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `1`, true},
	{`{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `1.5`, false},
	{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`, false},
	{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1.5`, true},
	{`{"allOf":[{"minimum":1},{"maximum":2}]}`, `3`, false},
	{`{"not":{"type":"null"}}`, `null`, false},
	{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]}}`, `{"a":1}`, false},
	{`{"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]}}`, `{"a":2}`, true},
	{`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, `{"x-a":"b"}`, true},
	{`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`, `{"y":"b"}`, false},
	{`{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, false},
	{`{"propertyNames":{"maxLength":2}}`, `{"abc":1}`, false},
	{`{"contains":{"type":"string"}}`, `[1,"a"]`, true},
	{`{"unevaluatedProperties":false,"properties":{"a":{}}}`, `{"a":1,"b":2}`, false},
	// draft-07
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["name"]}`, `{"name":"x","age":3}`, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"age":{"type":"integer","minimum":0}},"required":["name"]}`, `{"age":-3}`, false},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s","type":"integer"}}}`, `{"a":"x"}`, true},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, `"nope"`, false},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a",1]`, false},
	{`{"$schema":"http://json-schema.org/draft-04/schema#","minimum":1,"exclusiveMinimum":true}`, `1`, false},
	{`{"$schema":"https://json-schema.org/draft/2019-09/schema","dependentRequired":{"a":["b"]}}`, `{"a":1,"b":2}`, true},
}

// invalidJSON are instances that are not exactly one valid JSON value; both
// engines must reject them against any schema.
var invalidJSON = []string{
	``, ` `, `{`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `NaN`,
	`"abc`, `"\x"`, `"\u12"`, `"\ud800"`, `"\udc00x"`, `"\ud800\u0041"`, "\"\x01\"", "\"\xff\"", "\"\xed\xa0\x80\"",
	`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `[{"b":1,"b":1}]`, `1 2`, `{}x`, `tru`, `nul`, `[1 2]`, `{"a":1 "b":2}`,
}

func TestValidationEngines(t *testing.T) {
	for _, tc := range validationCases {
		v, err := CompileJSON([]byte(tc.schema), withFull)
		if err != nil {
			t.Errorf("CompileJSON(%s): %v", tc.schema, err)
			continue
		}
		fastErr := v.Validate([]byte(tc.instance))
		generalErr := v.ValidateGeneral([]byte(tc.instance))
		if CheckSyntax([]byte(tc.instance)) == nil {
			// On strictly valid JSON the trusted path gives the same verdict
			// and the same problems.
			trustedErr := v.ValidateTrusted([]byte(tc.instance))
			if fmt.Sprint(trustedErr) != fmt.Sprint(fastErr) {
				t.Errorf("schema %s, instance %s: ValidateTrusted = %v, Validate = %v", tc.schema, tc.instance, trustedErr, fastErr)
			}
		}
		if (fastErr == nil) != tc.valid {
			t.Errorf("%s engine: schema %s, instance %s: valid = %v, want %v (%v)", v.Engine(), tc.schema, tc.instance, fastErr == nil, tc.valid, fastErr)
		}
		if (generalErr == nil) != tc.valid {
			t.Errorf("santhosh: schema %s, instance %s: valid = %v, want %v (%v)", tc.schema, tc.instance, generalErr == nil, tc.valid, generalErr)
		}
		for _, err := range []error{fastErr, generalErr} {
			if err == nil {
				continue
			}
			ve, ok := err.(*ValidationError)
			if !ok || len(ve.Problems) == 0 || ve.Error() == "" {
				t.Errorf("schema %s, instance %s: error %#v is not a ValidationError with problems", tc.schema, tc.instance, err)
			}
		}
	}
}

func TestFastEngineCoverage(t *testing.T) {
	// Schemas of the simple subset must not fall back to santhosh.
	for _, tc := range validationCases {
		if strings.Contains(tc.schema, "allOf") || strings.Contains(tc.schema, "oneOf") ||
			strings.Contains(tc.schema, "anyOf") && !strings.Contains(tc.schema, `{"type":"null"}`) || strings.Contains(tc.schema, `"not"`) || strings.Contains(tc.schema, `"if"`) ||
			strings.Contains(tc.schema, "pattern") && strings.Contains(tc.schema, "Properties") || strings.Contains(tc.schema, "dependent") ||
			strings.Contains(tc.schema, "propertyNames") || strings.Contains(tc.schema, "contains") || strings.Contains(tc.schema, "unevaluated") ||
			strings.Contains(tc.schema, "$schema") || strings.Contains(tc.schema, "9007199254740993") {
			continue // outside the fast subset
		}
		v, err := CompileJSON([]byte(tc.schema), withFull)
		if err != nil {
			continue
		}
		if v.Engine() != "fast" {
			t.Errorf("schema %s uses the %s engine", tc.schema, v.Engine())
		}
	}
	v, err := CompileJSON([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"type":"string"}}}`), withFull)
	if err != nil || v.Engine() != "fast" {
		t.Errorf("simple draft-07 schema: %v, engine %v", err, v.Engine())
	}
}

func TestInvalidJSON(t *testing.T) {
	for _, schema := range []string{`true`, `{"type":"object","properties":{"a":{"type":"integer"}}}`, `{"anyOf":[{"type":"object"},{"type":"array"}]}`} {
		v, err := CompileJSON([]byte(schema), withFull)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range invalidJSON {
			for name, err := range map[string]error{"validator": v.Validate([]byte(in)), "santhosh": v.ValidateGeneral([]byte(in))} {
				if err == nil {
					t.Errorf("%s, schema %s: invalid JSON %q accepted", name, schema, in)
					continue
				}
				if msg := err.Error(); !strings.HasPrefix(msg, "arguments are not valid JSON: ") {
					t.Errorf("%s, schema %s: invalid JSON %q: message %q", name, schema, in, msg)
				}
			}
		}
	}
}

func TestMessages(t *testing.T) {
	const schema = `{
		"type": "object",
		"properties": {
			"city": {"type": "string", "minLength": 2},
			"count": {"type": "integer", "minimum": 1},
			"unit": {"enum": ["c", "f"]},
			"mode": {"const": "fast"},
			"tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 2, "uniqueItems": true},
			"ratio": {"type": "number", "exclusiveMaximum": 1, "multipleOf": 0.25},
			"odd name": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"], "additionalProperties": false}
		},
		"required": ["city"],
		"additionalProperties": false
	}`
	v, err := CompileJSON([]byte(schema), withFull)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("abcdefghij", 20)
	tests := []struct {
		instance string
		want     []Problem
	}{
		{`{"city":"Paris","count":0}`, []Problem{{"/count", "minimum", `argument "count": must be >= 1, got 0`}}},
		{`{"count":1}`, []Problem{{"/city", "required", `missing required argument "city"`}}},
		{`{"city":"Paris","unit":"k"}`, []Problem{{"/unit", "enum", `argument "unit": must be one of "c", "f", got string "k"`}}},
		{`{"city":"Paris","mode":"slow"}`, []Problem{{"/mode", "const", `argument "mode": must be "fast", got string "slow"`}}},
		{`{"city":"P"}`, []Problem{{"/city", "minLength", `argument "city": must be at least 2 characters long, got string "P" (1 character)`}}},
		{`{"city":7}`, []Problem{{"/city", "type", `argument "city": must be of type string, got 7`}}},
		{`{"city":"` + long + `","count":"3"}`, []Problem{{"/count", "type", `argument "count": must be of type integer, got string "3"`}}},
		{`{"city":"Paris","tags":["a","B","a"]}`, []Problem{
			{"/tags/1", "pattern", `argument "tags[1]": must match the regular expression "^[a-z]+$", got string "B"`},
			{"/tags", "maxItems", `argument "tags": must have at most 2 items, got 3`},
			{"/tags", "uniqueItems", `argument "tags": must not contain duplicate items, but items 0 and 2 are both "a"`},
		}},
		{`{"city":"Paris","ratio":1}`, []Problem{{"/ratio", "exclusiveMaximum", `argument "ratio": must be < 1, got 1`}}},
		{`{"city":"Paris","ratio":0.3}`, []Problem{{"/ratio", "multipleOf", `argument "ratio": must be a multiple of 0.25, got 0.3`}}},
		{`{"city":"Paris","zip":1}`, []Problem{{"/zip", "additionalProperties",
			`unknown argument "zip" (allowed: "city", "count", "unit", "mode", "tags", "ratio", "odd name")`}}},
		{`{"city":"Paris","odd name":{"y":1}}`, []Problem{
			{"/odd name/y", "additionalProperties", `unknown argument "['odd name'].y" (allowed: "x")`},
			{"/odd name/x", "required", `missing required argument "['odd name'].x"`},
		}},
		{`{"city":"Paris","odd name":[]}`, []Problem{{"/odd name", "type", `argument "['odd name']": must be of type object, got array []`}}},
		{`[1,2]`, []Problem{{"", "type", `arguments: must be of type object, got array [1,2]`}}},
		{`{"city":"` + long + `","count":"` + long + `"}`, []Problem{{"/count", "type",
			`argument "count": must be of type integer, got string "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"… (200 characters)`}}},
		{`{"city":"Paris","city":"Lyon"}`, []Problem{{"", "", `arguments are not valid JSON: duplicate member name "city" (at offset 16)`}}},
	}
	for _, tt := range tests {
		err := v.Validate([]byte(tt.instance))
		ve, ok := err.(*ValidationError)
		if !ok {
			t.Errorf("%s: error %v", tt.instance, err)
			continue
		}
		if len(ve.Problems) != len(tt.want) {
			t.Errorf("%s: problems\n%q\nwant\n%q", tt.instance, ve.Problems, tt.want)
			continue
		}
		for i := range tt.want {
			if ve.Problems[i] != tt.want[i] {
				t.Errorf("%s: problem %d\n%q\nwant\n%q", tt.instance, i, ve.Problems[i], tt.want[i])
			}
		}
		// santhosh finds the same problems, perhaps in another order.
		gerr := v.ValidateGeneral([]byte(tt.instance))
		gve, ok := gerr.(*ValidationError)
		if !ok {
			t.Errorf("%s: santhosh error %v", tt.instance, gerr)
			continue
		}
		gotPaths := map[string]bool{}
		for _, p := range gve.Problems {
			gotPaths[p.Path+" "+p.Keyword] = true
		}
		for _, p := range tt.want {
			if !gotPaths[p.Path+" "+p.Keyword] {
				t.Errorf("%s: santhosh misses %q in %q", tt.instance, p, gve.Problems)
			}
		}
	}
}

func TestManyProblems(t *testing.T) {
	v, err := CompileJSON([]byte(`{"items":{"type":"string"}}`), withFull)
	if err != nil {
		t.Fatal(err)
	}
	in := "[" + strings.Repeat("1,", 30) + "1]"
	ve := v.Validate([]byte(in)).(*ValidationError)
	if len(ve.Problems) != MaxProblems+1 || !strings.Contains(ve.Problems[MaxProblems].Message, "more problems") {
		t.Errorf("got %d problems, last %q", len(ve.Problems), ve.Problems[len(ve.Problems)-1])
	}
}

func TestManyProperties(t *testing.T) {
	// Objects with more than 64 properties track members differently.
	var b strings.Builder
	b.WriteString(`{"type":"object","additionalProperties":false,"required":["p0","p99"],"properties":{`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + itoa(i) + `":{"type":"integer"}`)
	}
	b.WriteString(`}}`)
	v, err := CompileJSON([]byte(b.String()), withFull)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in    string
		valid bool
	}{
		{`{"p0":1,"p99":2,"p70":3}`, true},
		{`{"p0":1,"p70":3}`, false},
		{`{"p0":1,"p99":2,"p70":"x"}`, false},
		{`{"p0":1,"p99":2,"p70":3,"p70":4}`, false},
		{`{"p0":1,"p99":2,"q":3}`, false},
	} {
		if err := v.Validate([]byte(tc.in)); (err == nil) != tc.valid {
			t.Errorf("%s: %v", tc.in, err)
		}
	}
	// Many undeclared members: duplicates are still found.
	v, err = CompileJSON([]byte(`{"type":"object"}`), withFull)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"m` + itoa(i) + `":1,`)
	}
	if err := v.Validate([]byte(b.String() + `"m0":2}`)); err == nil {
		t.Error("duplicate among many members accepted")
	}
	if err := v.Validate([]byte(b.String() + `"x":2}`)); err != nil {
		t.Error(err)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}
