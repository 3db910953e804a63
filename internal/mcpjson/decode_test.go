package mcpjson

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

func fastResults() []*protocol.CallToolResult {
	return []*protocol.CallToolResult{
		{Content: []protocol.Content{}},
		{Content: []protocol.Content{protocol.TextContent("hi")}},
		{Content: []protocol.Content{protocol.TextContent("")}, IsError: true},
		{Content: []protocol.Content{protocol.TextContent(strings.Repeat("é\"\n", 100))}, StructuredContent: jsontext.Value(`{"a": [1, 2]}`)},
		{ResultFields: protocol.ResultFields{Meta: protocol.Meta{"k": "v"}, ResultType: protocol.ResultComplete}, Content: []protocol.Content{protocol.TextContent("x")}},
		{Content: []protocol.Content{protocol.ImageContent([]byte{1, 2, 3}, "image/png"), protocol.AudioContent([]byte{4}, "audio/wav"),
			{Type: protocol.ContentText, Text: "annotated", Annotations: &protocol.Annotations{Priority: 0.5}},
			{Type: protocol.ContentText, Text: "meta", Meta: protocol.Meta{"m": 1.0}},
			protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "test://r", Text: "t"}),
			protocol.ResourceLinkContent(protocol.Resource{URI: "test://l", Name: "l"})}},
		{Content: nil},
	}
}

// DecodeCallToolResult decodes what json v2 decodes.
func TestDecodeCallToolResult(t *testing.T) {
	for _, r := range fastResults() {
		raw, _ := json.Marshal(r)
		var want, got protocol.CallToolResult
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := DecodeCallToolResult(raw, &got, nil); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v, %v\nwant %+v", raw, got, err, want)
		}
	}
}

// Inputs json v2 would not write: member order, escapes, spaces.
func TestDecodeCallToolResultRaw(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"\u0074ext","text":"a"}]}`,
		`{"content":[{"text":"a","type":"text"}]}`,
		`{ "content" : [ { "type" : "text" , "text" : "a\nb" } ] , "isError" : true }`,
		`{"content":[{"type":"texts","text":"a"}]}`,
	} {
		var want, got protocol.CallToolResult
		werr := json.Unmarshal([]byte(raw), &want)
		gerr := DecodeCallToolResult([]byte(raw), &got, nil)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\ngot  %+v, %v\nwant %+v, %v", raw, got, gerr, want, werr)
		}
	}
}

// Every field of CallToolResult and of a text Content is handled by the
// fast paths: a field added to either type must be added there too.
func TestFastPathsKnowEveryField(t *testing.T) {
	var names []string
	for _, f := range reflect.VisibleFields(reflect.TypeFor[protocol.CallToolResult]()) {
		if !f.Anonymous {
			names = append(names, f.Name)
		}
	}
	want := "Meta ResultType Content StructuredContent IsError"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("CallToolResult fields are %q; update decode.go and mcpjson.go, which handle %q", got, want)
	}
}

func BenchmarkDecodeCallToolResult(b *testing.B) {
	for _, size := range []int{20, 64 << 10} {
		raw, err := json.Marshal(&protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(strings.Repeat("x", size))}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var r protocol.CallToolResult
				if err := DecodeCallToolResult(raw, &r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
