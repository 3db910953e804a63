package mcpjson

import (
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/protocol"
)

func metaResult(m protocol.Meta) *protocol.CallToolResult {
	return &protocol.CallToolResult{
		ResultFields: protocol.ResultFields{Meta: m, ResultType: protocol.ResultComplete},
		Content:      []protocol.Content{protocol.TextContent("ok")},
	}
}

// A result's _meta is written as json v2 writes it, whether it is the
// server's own (written without reflection) or anything else.
func TestToolResultMetaMatchesJSON(t *testing.T) {
	full := protocol.Implementation{Name: "n\"é<>&\u2028", Title: "T", Version: "1.0", Description: "d\n", WebsiteURL: "https://x.example/?a=1&b=2"}
	for name, m := range map[string]protocol.Meta{
		"name and version":   {protocol.MetaServerInfo: protocol.Implementation{Name: "srv", Version: "1"}},
		"every field":        {protocol.MetaServerInfo: full},
		"empty":              {protocol.MetaServerInfo: protocol.Implementation{}},
		"icons":              {protocol.MetaServerInfo: protocol.Implementation{Name: "i", Version: "1", Icons: []protocol.Icon{{Src: "https://x.example/i.png"}}}},
		"pointer":            {protocol.MetaServerInfo: &full},
		"another key beside": {protocol.MetaServerInfo: full, "k": "v"},
		"another key alone":  {"k": protocol.Implementation{Name: "x"}},
		"invalid utf-8":      {protocol.MetaServerInfo: protocol.Implementation{Name: "a\xffb", Version: "1"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := metaResult(m)
			want, wantErr := json.Marshal(r)
			got, err := (*ToolResult)(r).AppendJSON(nil)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("AppendJSON error %v, json v2's %v", err, wantErr)
			}
			if err == nil && string(got) != string(want) {
				t.Errorf("AppendJSON = %s\nwant          %s", got, want)
			}
		})
	}
}

// The server's own _meta, on every 2026-07-28 answer, costs no
// allocation (json v2's reflection took several per answer).
func TestToolResultServerMetaAllocs(t *testing.T) {
	r := (*ToolResult)(metaResult(protocol.Meta{protocol.MetaServerInfo: protocol.Implementation{Name: "srv", Title: "Server", Version: "1.2.3"}}))
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := r.AppendJSON(buf[:0]); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("AppendJSON of a result with the server's _meta: %v allocations, want 0", n)
	}
}

func BenchmarkToolResultServerMeta(b *testing.B) {
	r := (*ToolResult)(metaResult(protocol.Meta{protocol.MetaServerInfo: protocol.Implementation{Name: "srv", Title: "Server", Version: "1.2.3"}}))
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.AppendJSON(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
