package streamable_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// BenchmarkToolsCallHTTP measures one tools/call round trip over
// Streamable HTTP on loopback, client and server together: both eras,
// answers as plain JSON and as an event stream, small and 64 KiB
// payloads, and with memory owned (Call, a server that makes no promise)
// or lent (client.Lend, a server with LendToolArguments).
func BenchmarkToolsCallHTTP(b *testing.B) {
	for _, era := range []struct{ name, version string }{{"legacy", protocol.Version20251125}, {"stateless", protocol.Version20260728}} {
		for _, body := range []struct {
			name string
			sse  bool
		}{{"json", false}, {"sse", true}} {
			for _, payload := range []struct {
				name string
				size int
			}{{"20B", 20}, {"64KiB", 64 << 10}} {
				for _, lend := range []bool{false, true} {
					name := era.name + "/" + body.name + "/" + payload.name + map[bool]string{false: "/owned", true: "/lent"}[lend]
					b.Run(name, func(b *testing.B) {
						benchmarkToolsCallHTTP(b, era.version, body.sse, payload.size, lend)
					})
				}
			}
		}
	}
}

func benchmarkToolsCallHTTP(b *testing.B, version string, sse bool, size int, lend bool) {
	s := testServer()
	if lend {
		var kept []string
		s = lendingServer(true, &kept)
	}
	ts, _ := serveHTTP(b, s, &streamablehandler.Options{AlwaysSSE: sse})
	c := connectHTTP(b, ts.URL, &client.Options{ProtocolVersion: version}, &streamable.Transport{DisableGETStream: true})
	var err error
	args := &echoIn{Message: strings.Repeat("x", size)}
	ctx := context.Background()
	check := func(res *protocol.CallToolResult) error {
		if len(res.Content) != 1 || len(res.Content[0].Text) != size {
			return fmt.Errorf("echo: %+v", res)
		}
		return nil
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	release := func() {} // what an owned result's release does
	var opts []client.CallOption
	if lend {
		opts = []client.CallOption{client.Lend(&release)}
	}
	for b.Loop() {
		var res *protocol.CallToolResult
		if res, err = c.Call(ctx, "echo", args, opts...); err == nil {
			err = check(res)
		}
		release()
		if err != nil {
			b.Fatal(err)
		}
	}
}
