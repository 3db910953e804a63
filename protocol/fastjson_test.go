package protocol

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func fastResults() []*CallToolResult {
	return []*CallToolResult{
		{Content: []Content{}},
		{Content: []Content{TextContent("hi")}},
		{Content: []Content{TextContent("")}, IsError: true},
		{Content: []Content{TextContent(strings.Repeat("é\"\n", 100))}, StructuredContent: jsontext.Value(`{"a": [1, 2]}`)},
		{ResultFields: ResultFields{Meta: Meta{"k": "v"}, ResultType: ResultComplete}, Content: []Content{TextContent("x")}},
		{Content: []Content{ImageContent([]byte{1, 2, 3}, "image/png"), AudioContent([]byte{4}, "audio/wav"),
			{Type: ContentText, Text: "annotated", Annotations: &Annotations{Priority: 0.5}},
			{Type: ContentText, Text: "meta", Meta: Meta{"m": 1.0}},
			EmbeddedResourceContent(ResourceContents{URI: "test://r", Text: "t"}),
			ResourceLinkContent(Resource{URI: "test://l", Name: "l"})}},
		{Content: nil},
	}
}

// DecodeCallToolResult decodes what json v2 decodes.
func TestDecodeCallToolResult(t *testing.T) {
	for _, r := range fastResults() {
		raw, _ := json.Marshal(r)
		var want, got CallToolResult
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
		var want, got CallToolResult
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
	for _, f := range reflect.VisibleFields(reflect.TypeFor[CallToolResult]()) {
		if !f.Anonymous {
			names = append(names, f.Name)
		}
	}
	want := "Meta ResultType Content StructuredContent IsError"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("CallToolResult fields are %q; update fastjson.go and internal/mcpjson, which handle %q", got, want)
	}
}

func BenchmarkDecodeCallToolResult(b *testing.B) {
	for _, size := range []int{20, 64 << 10} {
		raw, err := json.Marshal(&CallToolResult{Content: []Content{TextContent(strings.Repeat("x", size))}})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var r CallToolResult
				if err := DecodeCallToolResult(raw, &r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
