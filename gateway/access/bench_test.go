package access_test

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/access"
	"github.com/ferrymcp/ferry/gateway/audit"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// BenchmarkAccessToolsCall is the cost of the access rules and of the
// audit on a tools/call through the gateway, in one run: an echo server
// over an in-memory pipe called on /mcp by a caller the second of four
// rules allows, without middleware, with the rules, and with the rules
// and an audit record per call (written to io.Discard).
func BenchmarkAccessToolsCall(b *testing.B) {
	for _, cell := range []string{"none", "rules", "rules+audit"} {
		b.Run(cell, func(b *testing.B) { benchCall(b, cell) })
	}
}

func benchCall(b *testing.B, cell string) {
	var mw []intercept.Middleware
	if cell == "rules+audit" {
		mw = append(mw, audit.NewLog(io.Discard, false).Middleware(nil))
	}
	if cell != "none" {
		p, err := access.Compile(rules)
		if err != nil {
			b.Fatal(err)
		}
		mw = append(mw, access.NewLive(p).Middleware())
	}
	opts := &gateway.Options{Auth: headerAuth, Middleware: mw, Host: host.Options{RequestTimeout: -1, MaxRequestTimeout: time.Minute,
		Transport: func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, c := memory.NewPipe(jsonrpc.Limits{})
			srv := server.New(protocol.Implementation{Name: "a", Version: "1"}, nil)
			server.AddTool(srv, &protocol.Tool{Name: "read"}, func(ctx context.Context, req *server.Request, in msg) (string, error) {
				return in.Message, nil
			})
			go srv.Run(context.Background(), a)
			return c, nil
		}}}
	g, err := gateway.New([]*config.Server{{Name: "a", Transport: config.Stdio, Command: "unused"}}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close(context.Background())
	ts := httptest.NewServer(g)
	c := connect(b, ts.URL+"/mcp", protocol.LatestLegacyVersion, "guest", "", "")
	defer func() {
		c.Close()
		ts.CloseClientConnections()
		ts.Close()
	}()
	ctx := context.Background()
	in := msg{strings.Repeat("x", 20)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := processCPU()
	for range b.N {
		res, err := c.Call(ctx, "a__read", in)
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != in.Message {
			b.Fatal(fmt.Errorf("a__read: %v %v", res, err))
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op")
}

// processCPU is the CPU time the process used so far, in nanoseconds:
// the figure a loaded machine blurs least.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
