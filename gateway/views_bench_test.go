package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// BenchmarkViewToolsCall is the cost of a view on a tools/call: the test
// server's echo over an in-memory pipe, called on /mcp as a__echo, on a
// view that renames it, and on one that fixes its message (spliced into
// the arguments of each call, which sends none), one call in flight or
// 16, the message 20 B or 64 KiB.
func BenchmarkViewToolsCall(b *testing.B) {
	for _, conc := range []int{1, 16} {
		for _, size := range []int{20, 64 << 10} {
			for _, ep := range []struct{ name, url, tool string }{
				{"mcp", "/mcp", "a__echo"},
				{"view", "/views/v/mcp", "say"},
				{"view-fixed", "/views/v/mcp", "said"},
			} {
				name := fmt.Sprintf("%s/c%d/%dB", ep.name, conc, size)
				b.Run(name, func(b *testing.B) { benchViewCall(b, ep.url, ep.tool, conc, size) })
			}
		}
	}
}

func benchViewCall(b *testing.B, path, tool string, conc, size int) {
	msg := map[string]string{"message": strings.Repeat("x", size)}
	set := viewSet(b, `{"v": {"tools": {"a__echo": {"name": "say"}}}}`)
	if tool == "said" {
		// The message is the view's; the call sends none.
		set = viewSet(b, `{"v": {"tools": {"a__echo": {"name": "said", "fixed": {"message": "`+msg["message"]+`"}}}}}`)
		msg = nil
	}
	opts := &Options{Views: set, Host: host.Options{RequestTimeout: -1, MaxRequestTimeout: 10 * time.Minute,
		Transport: func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, c := memory.NewPipe(jsonrpc.Limits{})
			go testServer(s.Name).Run(context.Background(), a)
			return c, nil
		}}}
	g, err := New([]*config.Server{{Name: "a", Transport: config.Stdio, Command: "unused"}}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(context.Background())
	ts := httptest.NewServer(g)
	defer ts.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + path}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU() // the figure a loaded machine blurs least
	defer func() { b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op") }()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				var release func()
				res, err := c.Call(ctx, tool, msg, client.Lend(&release))
				if err == nil && (len(res.Content) != 1 || len(res.Content[0].Text) != size) {
					err = fmt.Errorf("echo of %d bytes: got %v", size, res.Content)
				}
				release()
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
