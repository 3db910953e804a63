package gateway

import (
	"context"
	"net/http/httptest"
	"os"
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
// HTTP (legacy session) to the test server: in the same process over an
// in-memory pipe (the gateway's own cost, allocations included), or a
// child process over stdio (as ferry serve runs it).
func BenchmarkToolsCall(b *testing.B) {
	exe, _ := os.Executable()
	for _, upstream := range []string{"memory", "stdio"} {
		for _, size := range []int{20, 64 << 10} {
			name := upstream + "/20B"
			if size > 20 {
				name = upstream + "/64KiB"
			}
			b.Run(name, func(b *testing.B) { benchToolsCall(b, upstream, exe, size) })
		}
	}
}

func benchToolsCall(b *testing.B, upstream, exe string, size int) {
	opts := &Options{Prefix: "never"}
	cfg := &config.Server{Name: "a", Transport: config.Stdio, Command: exe, Env: map[string]string{"FERRY_GATEWAY_TEST_SERVER": "a"}}
	if upstream == "memory" {
		opts.Host.Transport = func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, c := memory.NewPipe(jsonrpc.Limits{})
			go testServer(s.Name).Run(context.Background(), a)
			return c, nil
		}
	}
	g, err := New([]*config.Server{cfg}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(context.Background())
	ts := httptest.NewServer(g)
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
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
}
