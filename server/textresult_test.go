package server

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/internal/mcpjson"
	"github.com/ferrymcp/ferry/protocol"
)

// A string result sent without a CallToolResult is, byte for byte, what
// the CallToolResult would have been.
func TestTextOnlyResultWire(t *testing.T) {
	for _, text := range []string{"", "hi", `a"b\c`, "line\nbreak\ttab", "é ü 日本", "\x00\x1f\u2028", "bad \xff utf-8", string(make([]byte, 70<<10))} {
		full := &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(text)}}
		want, wantErr := (*mcpjson.ToolResult)(full).AppendJSON(nil)
		lean := &textOnlyResult{text: text}
		if wantErr != nil {
			if _, err := lean.AppendJSON(nil); err == nil {
				t.Errorf("%.20q: no error, want %v", text, wantErr)
			}
			continue
		}
		got, err := lean.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("%.20q: AppendJSON\n got %.80s, %v\nwant %.80s", text, got, err, want)
		}
		viaJSON, err := json.Marshal(lean)
		if err != nil || string(viaJSON) != string(want) {
			t.Errorf("%.20q: json.Marshal\n got %.80s, %v\nwant %.80s", text, viaJSON, err, want)
		}
	}
}
