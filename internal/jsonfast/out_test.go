package jsonfast

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"
)

// joined is the whole encoding of o.
func joined(o *Out) string { return string(bytes.Join(o.Buffers(nil), nil)) }

// An Out writes the bytes AppendQuote does, referring to a string only
// when it is long enough and needs no escaping.
func TestOutQuote(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct {
		s     string
		refer bool
	}{
		{"short", false},
		{long, true},
		{strings.Repeat("é", 50), true},
		{long + "\n", false},
		{long + `"`, false},
		{long + "\xff", false},
	} {
		o := Out{B: []byte("["), RefMin: 64}
		err := o.Quote(tc.s)
		o.B = append(o.B, ']')
		want, wantErr := AppendQuote([]byte("["), tc.s)
		want = append(want, ']')
		if joined(&o) != string(want) || (err == nil) != (wantErr == nil) {
			t.Errorf("Quote(%.20q) wrote %.40q, %v; want %.40q, %v", tc.s, joined(&o), err, want, wantErr)
		}
		if got := len(o.Refs) == 1; got != tc.refer {
			t.Errorf("Quote(%.20q) referred: %v, want %v", tc.s, got, tc.refer)
		}
		if o.Len() != len(want) {
			t.Errorf("Len = %d, want %d", o.Len(), len(want))
		}
	}
}

// A struct that cannot be encoded leaves the Out as it was, references
// included.
func TestOutStructRewinds(t *testing.T) {
	type args struct {
		A string  `json:"a"`
		F float64 `json:"f"`
	}
	long := strings.Repeat("y", 80)
	o := Out{RefMin: 64}
	o.Quote(long)
	before := joined(&o)
	if o.Struct(&args{A: long, F: posInf()}) {
		t.Fatal("an infinite float was encoded")
	}
	if joined(&o) != before || len(o.Refs) != 1 {
		t.Errorf("after a failed Struct: %q with %d refs, want %q with 1", joined(&o), len(o.Refs), before)
	}
	if !o.Struct(&args{A: long, F: 1}) || len(o.Refs) != 2 {
		t.Fatalf("Struct failed or did not refer: %d refs", len(o.Refs))
	}
	want := before + `{"a":"` + long + `","f":1}`
	if joined(&o) != want {
		t.Errorf("got %q, want %q", joined(&o), want)
	}
	o.Reset()
	if len(o.B) != 0 || len(o.Refs) != 0 || o.Refs[:1][0].S != "" {
		t.Error("Reset kept something")
	}
}

func posInf() float64 {
	var zero float64
	return 1 / zero
}

// Whatever the string and the threshold, the pieces of an Out join into
// what AppendQuote writes.
func FuzzOutQuote(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, refMin int) {
		o := Out{B: []byte("{"), RefMin: refMin}
		err := o.Quote(s)
		want, wantErr := AppendQuote([]byte("{"), s)
		if joined(&o) != string(want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("Quote(%q) with RefMin %d wrote %q, %v; want %q, %v", s, refMin, joined(&o), err, want, wantErr)
		}
	})
}

// Flatten puts what an Out refers to into its B, in place when B has
// the room, and the encoding stays the same.
func TestOutFlatten(t *testing.T) {
	long := func(c string) string { return strings.Repeat(c, 40) }
	for _, room := range []int{0, 4 << 10} {
		o := Out{B: make([]byte, 0, room), RefMin: 32}
		o.B = append(o.B, `{"a":`...)
		o.Quote(long("x"))
		o.B = append(o.B, `,"b":`...)
		o.RawRef([]byte(`{"c":"` + long("y") + `"}`))
		o.B = append(o.B, `,"d":`...)
		o.Quote(long("z"))
		o.B = append(o.B, `}`...)
		if len(o.Refs) != 3 || !o.Lent {
			t.Fatalf("room %d: %d refs, lent %v; want 3, true", room, len(o.Refs), o.Lent)
		}
		want := joined(&o)
		before := unsafe.SliceData(o.B)
		o.Flatten()
		if got := string(o.B); got != want || len(o.Refs) != 0 || o.Lent {
			t.Errorf("room %d: flattened to %q (%d refs, lent %v), want %q", room, got, len(o.Refs), o.Lent, want)
		}
		if inPlace := unsafe.SliceData(o.B) == before; inPlace != (room > 0) {
			t.Errorf("room %d: in place %v", room, inPlace)
		}
	}
}
