package jsonschema_test

import (
	stdjson "encoding/json"
	"flag"
	. "github.com/ferrymcp/ferry/jsonschema"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type weatherArgs struct {
	City     string   `json:"city" description:"City name, for example \"Paris, France\""`
	Unit     string   `json:"unit,omitempty" jsonschema:"enum=c|f,default=c,title=Unit"`
	Days     int      `json:"days,omitzero" jsonschema:"minimum=1,maximum=16,default=3"`
	Detailed bool     `json:"detailed,omitempty"`
	Fields   []string `json:"fields,omitempty" jsonschema:"enum=temp|wind|rain,uniqueItems,maxItems=3"`
	Lat      *float64 `json:"lat,omitempty" jsonschema:"minimum=-90,maximum=90"`
	Code     string   `json:"code,omitempty" jsonschema:"minLength=2,maxLength=8,pattern=^[A-Z]{2,3}(,[A-Z]+)?$"`
	//lint:ignore U1000 an unexported field, which inference must skip
	ignored int
	Skipped string `json:"-"`
}

type scalars struct {
	S    string
	B    bool
	I    int
	I8   int8
	I16  int16
	I32  int32
	I64  int64
	U    uint
	U8   uint8
	U16  uint16
	U32  uint32
	U64  uint64
	F32  float32
	F64  float64
	Any  any
	Raw  jsontext.Value
	Std  stdjson.RawMessage
	T    time.Time
	Date time.Time     `json:",format:DateOnly"`
	Unix time.Time     `json:",format:unix"`
	D    time.Duration `json:",format:units"`
	DN   time.Duration `json:",format:nano"`
	Blob []byte
	Hex  []byte `json:",format:hex"`
	Arr  [3]int
	Str  int64 `json:",string"`
}

type address struct {
	Street string `json:"street"`
	City   string `json:"city"`
}

type Base struct {
	ID      string `json:"id" description:"Identifier"`
	Created string `json:"created,omitempty"`
}

type named struct {
	Value int `json:"value"`
}

type composite struct {
	Base                                // inlined
	Named     named                     `json:"named"` // explicit name: a nested object
	Home      address                   `json:"home"`
	Work      *address                  `json:"work"` // nullable, optional
	Others    []address                 `json:"others,omitempty"`
	Scores    map[string]float64        `json:"scores,omitempty"`
	Matrix    [][]int                   `json:"matrix,omitempty"`
	ByID      map[int]string            `json:"byId,omitempty"`
	Pointers  []*int                    `json:"pointers,omitempty"`
	Forced    *string                   `json:"forced" jsonschema:"required"`
	Opt       string                    `json:"opt" jsonschema:"optional"`
	Created   string                    `json:"createdAt"`
	Nested    struct{ A, B int }        `json:"nested"`
	Choice    choice                    `json:"choice"`
	Text      textish                   `json:"text"`
	ExtraData map[string]jsontext.Value `json:",embed"`
}

type choice string

func (choice) JSONSchema() *Schema {
	return &Schema{Type: "string", Enum: []any{"yes", "no"}}
}

type textish struct{ v string }

func (t textish) MarshalText() ([]byte, error) { return []byte(t.v), nil }

type tree struct {
	Name     string    `json:"name"`
	Children []tree    `json:"children,omitempty"`
	Parent   *tree     `json:"parent,omitempty"`
	Link     *tree     `json:"link"`
	Meta     *treeMeta `json:"meta,omitempty"`
}

type treeMeta struct {
	Owner *tree    `json:"owner,omitempty"`
	Tags  []string `json:"tags"`
}

type holder struct {
	First  treeMeta  `json:"first"`
	Second *treeMeta `json:"second,omitempty"`
}

type conflicts struct {
	A1
	A2
	X int `json:"x"`
}

type A1 struct {
	Dup  int
	Only int `json:"only1"`
	X    int `json:"x"`
}

type A2 struct {
	Dup   int
	Only2 int `json:"only2"`
}

func TestInferGolden(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		opts *InferOptions
	}{
		{"weather", reflect.TypeFor[weatherArgs](), nil},
		{"weather_open", reflect.TypeFor[*weatherArgs](), &InferOptions{AllowAdditionalProperties: true}},
		{"scalars", reflect.TypeFor[scalars](), nil},
		{"composite", reflect.TypeFor[composite](), nil},
		{"tree", reflect.TypeFor[tree](), nil},
		{"holder", reflect.TypeFor[holder](), nil},
		{"conflicts", reflect.TypeFor[conflicts](), nil},
		{"slice", reflect.TypeFor[[]address](), nil},
		{"typeschemas", reflect.TypeFor[address](), &InferOptions{TypeSchemas: map[reflect.Type]*Schema{
			reflect.TypeFor[string](): {Type: "string", MinLength: Ptr(1)},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Infer(tt.typ, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(s, jsontext.WithIndent("  "))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			file := filepath.Join("testdata", "infer_"+tt.name+".json")
			if *update {
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("schema differs from %s:\n%s", file, got)
			}
			// Every inferred schema is a valid 2020-12 schema.
			if _, err := Compile(s, withFull); err != nil {
				t.Errorf("Compile: %v", err)
			}
		})
	}
}

func TestInferErrors(t *testing.T) {
	type badMin struct {
		S string `json:"s" jsonschema:"minimum=1"`
	}
	type badNumber struct {
		N int `json:"n" jsonschema:"maximum=ten"`
	}
	type badKeyword struct {
		N int `json:"n" jsonschema:"minimun=1"`
	}
	type badEnum struct {
		N int `json:"n" jsonschema:"enum=1|two"`
	}
	type badDefault struct {
		B bool `json:"b" jsonschema:"default=yes"`
	}
	type badPattern struct {
		S string `json:"s" jsonschema:"pattern=("`
	}
	type badItems struct {
		S string `json:"s" jsonschema:"maxItems=2"`
	}
	type badLength struct {
		N int `json:"n" jsonschema:"minLength=-1"`
	}
	type hasChan struct {
		C chan int `json:"c"`
	}
	type hasFunc struct {
		F func() `json:"f"`
	}
	type badMapKey struct {
		M map[[2]int]string `json:"m"`
	}
	type nested struct {
		Inner badMin `json:"inner"`
	}
	tests := []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[badMin](), "field badMin.S: "},
		{reflect.TypeFor[badMin](), "applies to numbers, not to string"},
		{reflect.TypeFor[badNumber](), `maximum must be a number, not "ten"`},
		{reflect.TypeFor[badKeyword](), `unknown keyword "minimun"`},
		{reflect.TypeFor[badEnum](), `enum value "two": not an integer`},
		{reflect.TypeFor[badDefault](), `default "yes": not a boolean`},
		{reflect.TypeFor[badPattern](), "invalid pattern"},
		{reflect.TypeFor[badItems](), "applies to arrays"},
		{reflect.TypeFor[badLength](), "minLength must be a non-negative integer"},
		{reflect.TypeFor[hasChan](), "chan int has no JSON representation"},
		{reflect.TypeFor[hasFunc](), "has no JSON representation"},
		{reflect.TypeFor[badMapKey](), "cannot be a JSON object name"},
		{reflect.TypeFor[nested](), "field badMin.S"},
	}
	for _, tt := range tests {
		_, err := Infer(tt.typ, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Infer(%v): error %v, want one containing %q", tt.typ, err, tt.want)
		}
	}
	if _, err := Infer(nil, nil); err == nil {
		t.Error("Infer(nil) succeeded")
	}
}

// TestInferMatchesMarshal checks that what json v2 marshals from values of
// the inferred types is valid against the inferred schemas.
func TestInferMatchesMarshal(t *testing.T) {
	lat := 48.85
	values := []any{
		weatherArgs{City: "Paris", Unit: "c", Days: 3, Fields: []string{"temp"}, Lat: &lat, Code: "FR"},
		weatherArgs{},
		scalars{I8: -128, U8: 255, Arr: [3]int{1, 2, 3}, Blob: []byte("hi"), D: time.Second, Str: 42},
		composite{Base: Base{ID: "x"}, Others: []address{{}}, Scores: map[string]float64{"a": 1}, ByID: map[int]string{1: "a"},
			Pointers: []*int{nil}, Choice: "yes", ExtraData: map[string]jsontext.Value{"other": jsontext.Value(`[1]`)}},
		tree{Name: "root", Children: []tree{{Name: "kid", Link: &tree{Name: "x"}}}, Meta: &treeMeta{Owner: &tree{}}},
		holder{Second: &treeMeta{Tags: []string{"a"}}},
		conflicts{},
		[]address{{Street: "s", City: "c"}},
	}
	for _, val := range values {
		s, err := Infer(reflect.TypeOf(val), nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Compile(s, withFull)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(val, json.ExperimentalSupportFormatTag(true))
		if err != nil {
			t.Fatalf("Marshal(%T): %v", val, err)
		}
		if err := v.Validate(data); err != nil {
			t.Errorf("%T: marshalled %s is invalid: %v", val, data, err)
		}
		if err := v.ValidateGeneral(data); err != nil {
			t.Errorf("%T: marshalled %s is invalid for santhosh: %v", val, data, err)
		}
	}
}

func TestInferCacheReturnsCopies(t *testing.T) {
	a, err := For[weatherArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Properties["city"].Description = "changed"
	a.Required = nil
	b, err := For[weatherArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Properties["city"].Description == "changed" || len(b.Required) == 0 {
		t.Error("modifying a result of For changed the cache")
	}
	// Concurrent use (run with -race).
	done := make(chan bool)
	for range 8 {
		go func() {
			for range 50 {
				s, _ := For[composite](nil)
				s.Description = "x"
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
}
