package stdio

import (
	"context"
	"testing"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/go-json-experiment/json/jsontext"
)

// BenchmarkStdioRoundTrip measures one call answered by an echo handler
// across a pair of OS pipes: both ends' framing, encoding and decoding,
// and the Conn on each side.
func BenchmarkStdioRoundTrip(b *testing.B) {
	a, c, closePipes := osPipes(b)
	defer closePipes()
	ctx := context.Background()
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{Handler: echoHandler})
	defer server.Close()
	client := jsonrpc2.NewConn(ctx, c, nil)
	defer client.Close()
	params := jsontext.Value(`{"name":"echo","arguments":{"text":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Call(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioRoundTripParallel is the same with concurrent callers,
// whose answers the writer coalesces.
func BenchmarkStdioRoundTripParallel(b *testing.B) {
	a, c, closePipes := osPipes(b)
	defer closePipes()
	ctx := context.Background()
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{Handler: echoHandler})
	defer server.Close()
	client := jsonrpc2.NewConn(ctx, c, nil)
	defer client.Close()
	params := jsontext.Value(`{"name":"echo","arguments":{"text":"hello"}}`)
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := client.Call(ctx, "tools/call", params); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
