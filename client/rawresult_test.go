package client

import (
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// TestRawResultType: a raw result's resultType is the one the decoder
// picked out, or, for a message it did not decode, the one a walk finds.
func TestRawResultType(t *testing.T) {
	for _, tc := range []struct{ result, want string }{
		{`{"content":[]}`, ""},
		{`{"content":[],"resultType":"complete"}`, "complete"},
		{`{"resultType":"input_required","inputRequests":{}}`, "input_required"},
		{`{"resultType":null}`, ""},
		{`{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}`, ""},
	} {
		m, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"result":`+tc.result+`}`), jsonrpc.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []*jsonrpc.Message{m, {ID: m.ID, Result: m.Result}} { // decoded, and built
			var r rawResult
			if err := r.readFrom(m); err != nil || r.ResultType != tc.want || string(r.raw) != tc.result {
				t.Errorf("%s: resultType %q, raw %s, %v; want %q", tc.result, r.ResultType, r.raw, err, tc.want)
			}
		}
	}
	bad, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resultType":7}}`), jsonrpc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var r rawResult
	if err := r.readFrom(bad); err == nil {
		t.Error("a resultType that is no string was accepted")
	}
}

// BenchmarkRawResult is the reading of a 64 KiB tools/call answer that a
// gateway passes on undecoded: its resultType as the decoder picked it out
// (sniffed), and as a walk of the result finds it (walked, a message the
// decoder did not see).
func BenchmarkRawResult(b *testing.B) {
	m, err := jsonrpc.Decode([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`+
		strings.Repeat("x", 64<<10)+`"}]}}`), jsonrpc.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		m    *jsonrpc.Message
	}{{"sniffed", m}, {"walked", &jsonrpc.Message{ID: m.ID, Result: m.Result}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r rawResult
				if err := r.readFrom(tc.m); err != nil || r.ResultType != "" {
					b.Fatal(err)
				}
			}
		})
	}
}
