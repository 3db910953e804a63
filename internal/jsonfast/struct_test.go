package jsonfast

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

type flat struct {
	S    string  `json:"s"`
	SE   string  `json:"se,omitempty"`
	SZ   string  `json:"sz,omitzero"`
	B    bool    `json:"b"`
	BZ   bool    `json:"bz,omitzero"`
	BE   bool    `json:"be,omitempty"`
	I    int     `json:"i"`
	I8   int8    `json:"i8,omitzero"`
	U16  uint16  `json:"u16"`
	F32  float32 `json:"f32"`
	F64  float64 `json:"f64,omitzero"`
	Name string
	//lint:ignore U1000 an unexported field, which the encoder must skip
	skip int
	Dash int `json:"-"`
}

type named string

type withNamed struct {
	N named `json:"n"`
}

type unsupported struct {
	T time.Time `json:"t"`
}

type embedded struct {
	flat
	X int `json:"x"`
}

type quoted struct {
	N int `json:"n,string"`
}

func TestAppendStructMatchesV2(t *testing.T) {
	values := []any{
		&flat{},
		&flat{S: "héllo \"x\"\n", SE: "e", SZ: "z", B: true, BZ: true, BE: true, I: -42, I8: 7, U16: 65535, F32: 1.5, F64: 1e21, Name: "n"},
		&flat{F32: 0.1, F64: math.SmallestNonzeroFloat64},
		&withNamed{N: "named"},
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := AppendStruct(nil, v)
		if !ok || string(got) != string(want) {
			t.Errorf("AppendStruct(%+v) = %s, %v; want %s", v, got, ok, want)
		}
	}
	for _, v := range []any{&unsupported{}, &embedded{}, &quoted{}, flat{}, (*flat)(nil), &flat{F64: math.NaN()}, &flat{S: "\xff"}} {
		if got, ok := AppendStruct([]byte("x"), v); ok || string(got) != "x" {
			t.Errorf("AppendStruct(%T) = %s, %v; want no fast path", v, got, ok)
		}
	}
}

func TestDecodeStructMatchesV2(t *testing.T) {
	inputs := []string{
		`{}`, `{"s":"a","b":true,"i":-3,"u16":9,"f32":1.25,"f64":-2e-3,"Name":"N","unknown":{"x":[1,2]}}`,
		`{"s":"esc\u00e9\n","se":"","i8":127}`, `{"s":null,"b":null,"i":null}`, `{"i":1.5}`, `{"i":1e2}`,
		`{"i8":300}`, `{"u16":-1}`, `{"s":5}`, `{"b":"true"}`, `{"f32":3.5e38}`, `{"f32":"x"}`,
		`{"Name":"case","name":"other"}`, `{"\u0073":"escaped name"}`, `{"skip":1,"Dash":2}`,
	}
	for _, in := range inputs {
		var want flat
		werr := json.Unmarshal([]byte(in), &want)
		var got flat
		ok := DecodeStruct([]byte(in), &got)
		switch {
		case werr != nil && ok:
			t.Errorf("%s: json v2 fails (%v) but the fast path decoded %+v", in, werr, got)
		case werr == nil && ok && !reflect.DeepEqual(got, want):
			t.Errorf("%s: got %+v, want %+v", in, got, want)
		}
	}
	var n withNamed
	if !DecodeStruct([]byte(`{"n":"v"}`), &n) || n.N != "v" {
		t.Errorf("named string: %+v", n)
	}
	if DecodeStruct([]byte(`{"t":"2020-01-01T00:00:00Z"}`), &unsupported{}) {
		t.Error("time.Time decoded by the fast path")
	}
}

func FuzzDecodeStruct(f *testing.F) {
	f.Add(`{"s":"a","b":true,"i":-3,"u16":9,"f32":1.25,"f64":-2e-3}`)
	f.Add(`{"s":"\ud83d\ude00","i":9223372036854775807}`)
	f.Fuzz(func(t *testing.T, in string) {
		var probe any
		if json.Unmarshal([]byte(in), &probe) != nil {
			return // the fast path is only ever given valid JSON
		}
		var want flat
		werr := json.Unmarshal([]byte(in), &want)
		var got flat
		ok := DecodeStruct([]byte(in), &got)
		if ok && werr != nil {
			t.Fatalf("%s: json v2 fails (%v) but the fast path decoded %+v", in, werr, got)
		}
		if ok && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %+v, want %+v", in, got, want)
		}
	})
}

type stringArgs struct {
	A string `json:"a"`
	B string `json:"b,omitempty"`
}

// DecodeStringFields must accept exactly the objects of string members a
// and b with a present, decoding them as json v2 does.
func FuzzDecodeStringFields(f *testing.F) {
	for _, s := range []string{`{"a":"x"}`, `{"a":"x","b":"y"}`, `{"b":"y"}`, `{"a":null}`, `{"a":1}`,
		`{"a":"x","c":"z"}`, `{"\u0061":"\u00e9"}`, `[]`, `{}`, `{"A":"x"}`} {
		f.Add(s)
	}
	names, ok := StringFields(reflect.TypeFor[stringArgs]())
	if !ok || !reflect.DeepEqual(names, []string{"a", "b"}) {
		f.Fatalf("StringFields = %v, %v", names, ok)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var members map[string]any
		if json.Unmarshal([]byte(in), &members) != nil && json.Unmarshal([]byte(in), new(any)) != nil {
			return // only valid JSON (without duplicate names) is ever given
		}
		want := members != nil
		if want {
			_, hasA := members["a"]
			want = hasA
			for k, v := range members {
				if _, isString := v.(string); !isString || (k != "a" && k != "b") {
					want = false
				}
			}
		}
		var got stringArgs
		ok := DecodeStringFields([]byte(in), &got, 1)
		if ok != want {
			t.Fatalf("%s: accepted %v, want %v", in, ok, want)
		}
		if ok {
			var ref stringArgs
			if err := json.Unmarshal([]byte(in), &ref); err != nil || ref != got {
				t.Fatalf("%s: got %+v, json v2 %+v (%v)", in, got, ref, err)
			}
		}
	})
}
