package client_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// echoServer is the benchmarks' server: one typed echo tool.
func echoServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "bench", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		return in.Message, nil
	})
	return s
}

type pipeKind int

const (
	inMemory pipeKind = iota
	osPipe
)

// benchClient connects a client to the echo server over the given pipe,
// in the given era.
func benchClient(b testing.TB, kind pipeKind, version string) *client.Client {
	b.Helper()
	var serverEnd, clientEnd jsonrpc.Stream
	switch kind {
	case inMemory:
		serverEnd, clientEnd = memory.NewPipe(jsonrpc.Limits{})
	case osPipe:
		// Two real OS pipes with the stdio framing on both ends: what a
		// launched server and its client exchange, minus the process.
		c2sR, c2sW, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		s2cR, s2cW, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		serverEnd = stdio.NewServerStream(c2sR, s2cW, jsonrpc.Limits{})
		clientEnd = stdio.NewServerStream(s2cR, c2sW, jsonrpc.Limits{})
		b.Cleanup(func() {
			for _, f := range []*os.File{c2sR, c2sW, s2cR, s2cW} {
				f.Close()
			}
		})
	}
	conn := echoServer().Connect(context.Background(), serverEnd)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: clientEnd}, &client.Options{ProtocolVersion: version})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Close()
		conn.Close()
	})
	return c
}

// BenchmarkToolsCall measures one tools/call round trip, client and
// server together, over an in-memory pipe and a real OS pipe, in both
// eras, with a small and a 64 KiB payload.
func BenchmarkToolsCall(b *testing.B) {
	for _, pipe := range []struct {
		name string
		kind pipeKind
	}{{"memory", inMemory}, {"stdio-pipe", osPipe}} {
		for _, era := range []struct{ name, version string }{{"legacy", protocol.Version20251125}, {"stateless", protocol.Version20260728}} {
			for _, payload := range []struct {
				name string
				size int
			}{{"20B", 20}, {"64KiB", 64 << 10}} {
				b.Run(pipe.name+"/"+era.name+"/"+payload.name, func(b *testing.B) {
					c := benchClient(b, pipe.kind, era.version)
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

// BenchmarkToolsCallParallel is the same round trip with many calls in
// flight on one connection.
func BenchmarkToolsCallParallel(b *testing.B) {
	for _, pipe := range []struct {
		name string
		kind pipeKind
	}{{"memory", inMemory}, {"stdio-pipe", osPipe}} {
		b.Run(pipe.name, func(b *testing.B) {
			c := benchClient(b, pipe.kind, protocol.Version20251125)
			args := &echoIn{Message: "01234567890123456789"}
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Call(context.Background(), "echo", args); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
