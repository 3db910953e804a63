package gateway

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// BenchmarkToolsCall is a tools/call through the gateway over Streamable
// HTTP (legacy session), to an upstream server in the same process over an
// in-memory pipe: the gateway's own cost per call, allocations included.
func BenchmarkToolsCall(b *testing.B) {
	for _, size := range []int{20, 64 << 10} {
		b.Run(map[int]string{20: "20B", 64 << 10: "64KiB"}[size], func(b *testing.B) {
			opts := &Options{Prefix: "never"}
			opts.Host.Transport = func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
				a, c := memory.NewPipe(jsonrpc.Limits{})
				go testServer(s.Name).Run(context.Background(), a)
				return c, nil
			}
			g, err := New([]*config.Server{{Name: "a", Transport: config.Stdio, Command: "in-process"}}, opts)
			if err != nil {
				b.Fatal(err)
			}
			defer g.Close(context.Background())
			ts := newLoopback(b, g)
			ctx := context.Background()
			c, err := client.Connect(ctx, &streamableTransport{ts + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			msg := map[string]string{"message": strings.Repeat("x", size)}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := c.Call(ctx, "echo", msg)
				if err != nil || len(res.Content[0].Text) != size {
					b.Fatal(res, err)
				}
			}
		})
	}
}

type streamableTransport struct{ url string }

func (t *streamableTransport) Open(ctx context.Context) (jsonrpc.Stream, error) {
	return (&streamable.Transport{URL: t.url}).Open(ctx)
}

func newLoopback(b *testing.B, g *Gateway) string {
	ts := httptest.NewServer(g)
	b.Cleanup(ts.Close)
	return ts.URL
}
