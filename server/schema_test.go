package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/jsonschema/full"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// A server without a schema engine refuses a schema beyond the built-in
// validator at registration, with a message that says where the engine
// is, even though this test binary links jsonschema/full: the engine is
// an option, not a side effect of an import. Simple raw schemas work.
func TestSchemaEngine(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
	h := func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("ok")}}, nil
	}
	s.AddTool(&protocol.Tool{Name: "simple", InputSchema: []byte(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)}, h)
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(r.(string), "jsonschema/full") {
			t.Errorf("panic %v, want a hint to jsonschema/full", r)
		}
	}()
	s.AddTool(&protocol.Tool{Name: "complex", InputSchema: []byte(`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`)}, h)
}

// With a schema engine in Options, the same schema registers and
// validates: the engine is an explicit option, not a side effect of an
// import.
func TestSchemaEngineOption(t *testing.T) {
	s := server.New(protocol.Implementation{Name: "t", Version: "1"}, &server.Options{SchemaEngine: full.Engine{}})
	s.AddTool(&protocol.Tool{Name: "complex", InputSchema: []byte(`{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`)},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("ok")}}, nil
		})
	a, b := memory.NewPipe(jsonrpc.Limits{})
	go s.Run(t.Context(), a)
	c, err := client.Connect(t.Context(), client.StreamTransport{Stream: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if res, err := c.Call(t.Context(), "complex", map[string]any{"a": 1}); err != nil || res.IsError {
		t.Errorf("a valid call: %+v, %v", res, err)
	}
	if res, err := c.Call(t.Context(), "complex", map[string]any{"c": 1}); err == nil && !res.IsError {
		t.Errorf("an invalid call was accepted: %+v", res)
	}
}
