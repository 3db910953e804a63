package streamable_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// BenchmarkToolsCallHTTP measures one tools/call round trip over
// Streamable HTTP on loopback, client and server together: both eras,
// answers as plain JSON and as an event stream, small and 64 KiB
// payloads.
func BenchmarkToolsCallHTTP(b *testing.B) {
	for _, era := range []struct{ name, version string }{{"legacy", protocol.Version20251125}, {"modern", protocol.Version20260728}} {
		for _, body := range []struct {
			name string
			sse  bool
		}{{"json", false}, {"sse", true}} {
			for _, payload := range []struct {
				name string
				size int
			}{{"20B", 20}, {"64KiB", 64 << 10}} {
				b.Run(era.name+"/"+body.name+"/"+payload.name, func(b *testing.B) {
					h := streamable.NewHandler(testServer(), &streamable.Options{AlwaysSSE: body.sse})
					ts := httptest.NewServer(h)
					defer ts.Close()
					defer h.Close()
					c, err := client.Connect(context.Background(), &streamable.Transport{URL: ts.URL, DisableGETStream: true},
						&client.Options{ProtocolVersion: era.version})
					if err != nil {
						b.Fatal(err)
					}
					defer c.Close()
					args := &echoIn{Message: strings.Repeat("x", payload.size)}
					ctx := context.Background()
					b.SetBytes(int64(payload.size))
					b.ReportAllocs()
					for b.Loop() {
						res, err := c.Call(ctx, "echo", args)
						if err != nil || len(res.Content) != 1 || len(res.Content[0].Text) != payload.size {
							b.Fatalf("%v %v", res, err)
						}
					}
				})
			}
		}
	}
}
