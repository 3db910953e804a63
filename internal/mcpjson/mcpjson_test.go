package mcpjson

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
)

// ToolResult writes the bytes json v2 writes for a protocol.CallToolResult, with
// AppendJSON and, referring to a long text, with AppendOut.
func TestToolResultMatchesJSON(t *testing.T) {
	long := strings.Repeat("x", 1<<10)
	for _, r := range []*protocol.CallToolResult{
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
		{Content: []protocol.Content{protocol.TextContent(long)}},
	} {
		want, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got, err := (*ToolResult)(r).AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("AppendJSON = %s, %v\nwant          %s", got, err, want)
		}
		if got, err := json.Marshal((*ToolResult)(r)); err != nil || string(got) != string(want) {
			t.Errorf("json.Marshal = %s, %v\nwant          %s", got, err, want)
		}
		o := jsonfast.Out{RefMin: len(long)}
		if err := (*ToolResult)(r).AppendOut(&o); err != nil {
			t.Fatal(err)
		}
		if got := bytes.Join(o.Buffers(nil), nil); string(got) != string(want) {
			t.Errorf("AppendOut = %.80s\nwant        %.80s", got, want)
		}
	}
}
