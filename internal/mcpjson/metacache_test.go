package mcpjson

import (
	"reflect"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

func TestMetaCache(t *testing.T) {
	var c MetaCache
	raw := jsontext.Value(`{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"},"tags":["a",{"b":2}]}`)
	want := protocol.Meta{
		protocol.MetaServerInfo: map[string]any{"name": "s", "version": "1"},
		"tags":                  []any{"a", map[string]any{"b": 2.0}},
	}
	first, err := c.Decode(raw)
	if err != nil || !reflect.DeepEqual(first, want) {
		t.Fatalf("first decode = %v, %v", first, err)
	}
	// What a caller does to its result must not reach the next one.
	first[protocol.MetaServerInfo].(map[string]any)["name"] = "changed"
	first["tags"].([]any)[1].(map[string]any)["b"] = "changed"
	first["extra"] = true
	for range 2 {
		again, err := c.Decode(raw)
		if err != nil || !reflect.DeepEqual(again, want) {
			t.Fatalf("cached decode = %v, %v", again, err)
		}
	}
	other, err := c.Decode(jsontext.Value(`{"k":null}`))
	if err != nil || !reflect.DeepEqual(other, protocol.Meta{"k": nil}) {
		t.Fatalf("other decode = %v, %v", other, err)
	}
	if _, err := c.Decode(jsontext.Value(`[1]`)); err == nil {
		t.Fatal("an array decoded as _meta")
	}
}
