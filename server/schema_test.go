package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// This package's tests do not link the full JSON Schema engine: a schema
// beyond the built-in validator is refused at registration with a message
// that says what to import, while simple raw schemas work.
func TestSchemaEngine(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	h := func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("ok")}}, nil
	}
	s.AddTool(&protocol.Tool{Name: "simple", InputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)}, h)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "jsonschema/full") {
			t.Errorf("panic %v, want a hint to import jsonschema/full", r)
		}
	}()
	s.AddTool(&protocol.Tool{Name: "complex", InputSchema: []byte(`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`)}, h)
}
