package jsonschema_test

import (
	. "github.com/ferrymcp/ferry/jsonschema"
	"strings"
	"testing"
)

type benchSmallArgs struct {
	City  string `json:"city" description:"City name"`
	Unit  string `json:"unit,omitempty" jsonschema:"enum=c|f"`
	Count int    `json:"count,omitzero" jsonschema:"minimum=1,maximum=10"`
	Exact bool   `json:"exact,omitzero"`
}

type benchMessage struct {
	Message string `json:"message"`
}

type benchAddress struct {
	Street string `json:"street"`
	City   string `json:"city"`
	Zip    string `json:"zip" jsonschema:"pattern=^[0-9]{5}$"`
}

type benchPerson struct {
	Name      string         `json:"name" jsonschema:"minLength=1,maxLength=100"`
	Age       int            `json:"age" jsonschema:"minimum=0,maximum=150"`
	Emails    []string       `json:"emails" jsonschema:"maxItems=10"`
	Addresses []benchAddress `json:"addresses"`
	Tags      map[string]int `json:"tags,omitempty"`
}

func mustValidator[T any](tb testing.TB) *Validator {
	tb.Helper()
	s, err := For[T](nil)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := Compile(s, withFull)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

const benchNested = `{"name":"Ada Lovelace","age":36,"emails":["ada@example.com","countess@example.org"],
"addresses":[{"street":"12 St James's Square","city":"London","zip":"12345"},{"street":"Ockham Park","city":"Ockham","zip":"54321"}],
"tags":{"math":1,"poetry":2}}`

func benchValidate(b *testing.B, v *Validator, instance []byte, general bool) {
	b.ReportAllocs()
	b.SetBytes(int64(len(instance)))
	for b.Loop() {
		var err error
		if general {
			err = v.ValidateGeneral(instance)
		} else {
			err = v.Validate(instance)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	small := mustValidator[benchSmallArgs](b)
	msg := mustValidator[benchMessage](b)
	nested := mustValidator[benchPerson](b)
	smallIn := []byte(`{"city":"Paris","unit":"c","count":3}`)
	bigIn := []byte(`{"message":"` + strings.Repeat("lorem ipsum dolor sit amet, ", 64<<10/28) + `"}`)
	bigUnicode := []byte(`{"message":"` + strings.Repeat("héllo wörld ✓ ", 64<<10/18) + `"}`)
	for _, engine := range []struct {
		name    string
		general bool
	}{{"fast", false}, {"santhosh", true}} {
		b.Run("SmallArgs/"+engine.name, func(b *testing.B) { benchValidate(b, small, smallIn, engine.general) })
		b.Run("String64K/"+engine.name, func(b *testing.B) { benchValidate(b, msg, bigIn, engine.general) })
		b.Run("String64KUnicode/"+engine.name, func(b *testing.B) { benchValidate(b, msg, bigUnicode, engine.general) })
		b.Run("Nested/"+engine.name, func(b *testing.B) { benchValidate(b, nested, []byte(benchNested), engine.general) })
	}
}

func BenchmarkFor(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := For[benchPerson](nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	s, err := For[benchPerson](nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(s, withFull); err != nil {
			b.Fatal(err)
		}
	}
}
