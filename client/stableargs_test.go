package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// TestStableArgsReferred: CallToolRaw's arguments, which do not change
// until written, are referred to by a stdio wire when long (written with
// writev from where they are), and copied when short or when they hold
// a newline (white space the writer could not make a space); the
// encoding is the same either way.
func TestStableArgsReferred(t *testing.T) {
	long := `{"message":"` + strings.Repeat("x", 64<<10) + `"}`
	for _, tc := range []struct {
		name, args string
		refers     bool
	}{
		{"long", long, true},
		{"short", `{"message":"hi"}`, false},
		{"long with a newline", strings.Replace(long, ":", ":\n", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := jsonfast.Out{RefMin: jsonrpcapi.WireRefMin}
			w := &callToolWire{Name: "echo", Arguments: stableArgs(tc.args)}
			if err := w.AppendOut(&o); err != nil {
				t.Fatal(err)
			}
			if refers := len(o.Refs) > 0; refers != tc.refers {
				t.Errorf("refers %v, want %v", refers, tc.refers)
			}
			var got []byte
			for _, b := range o.Buffers(nil) {
				got = append(got, b...)
			}
			if want := `{"name":"echo","arguments":` + tc.args + `}`; string(got) != want {
				t.Errorf("encoded %.80q, want %.80q", got, want)
			}
			plain, err := w.AppendJSON(nil) // other encoders copy
			if err != nil || string(plain) != string(got) {
				t.Errorf("AppendJSON: %.80q, %v", plain, err)
			}
		})
	}
}

// BenchmarkCallToolWire is the encoding of a tools/call with 64 KiB of
// arguments into a stdio wire, and the stdio writer's look for newlines
// in what was copied into it (oneLine): CallTool's arguments
// (jsontext.Value), copied, and CallToolRaw's (stableArgs), referred to.
func BenchmarkCallToolWire(b *testing.B) {
	args := `{"message":"` + strings.Repeat("x", 64<<10) + `"}`
	for _, tc := range []struct {
		name string
		args any
	}{{"copied", jsontext.Value(args)}, {"referred", stableArgs(args)}} {
		b.Run(tc.name, func(b *testing.B) {
			o := jsonfast.Out{RefMin: jsonrpcapi.WireRefMin}
			w := &callToolWire{Name: "echo", Arguments: tc.args}
			b.ReportAllocs()
			for b.Loop() {
				o.Reset()
				if err := w.AppendOut(&o); err != nil {
					b.Fatal(err)
				}
				if bytes.IndexByte(o.B, '\n') >= 0 {
					b.Fatal("a newline")
				}
			}
		})
	}
}
