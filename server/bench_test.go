package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// lineFeeder hands the server one request line per read, forever.
type lineFeeder struct {
	line []byte
	off  int
	n    int
	max  int
}

func (f *lineFeeder) Read(p []byte) (int, error) {
	if f.off == len(f.line) {
		if f.n == f.max {
			return 0, io.EOF
		}
		f.n++
		f.off = 0
		// Every request gets its own id, as a client's would.
		copy(f.line[len(`{"jsonrpc":"2.0","id":`):], fmt.Sprintf("%09d", 100000000+f.n))
	}
	c := copy(p, f.line[f.off:])
	f.off += c
	return c, nil
}

type countWriter struct{ n, errors int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if len(p) > 40 && bytes.Contains(p[:40], []byte(`"error":`)) {
		w.errors++
	}
	return len(p), nil
}

// BenchmarkServeToolsCall measures the server alone: a typed echo tool
// called over the stdio framing with the request the benchmark harness
// sends, from reading the line to writing the answer.
// The 2026-07-28 sub-benchmarks send the request with its per-request
// _meta and no initialize, and every answer carries the server's _meta.
func BenchmarkServeToolsCall(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
		era  string
	}{{"20B", 20, "legacy"}, {"64KiB", 64 << 10, "legacy"}, {"2026/20B", 20, "2026"}} {
		size := c.size
		b.Run(c.name, func(b *testing.B) {
			s := server.New(protocol.Implementation{Name: "bench", Version: "1"}, nil)
			server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
				Message string `json:"message"`
			}) (string, error) {
				return in.Message, nil
			})
			msg := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", size/62+1)[:size]
			init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n"
			meta := ""
			if c.era == "2026" {
				init = ""
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			}
			call := `{"jsonrpc":"2.0","id":100000000,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + msg + `"}` + meta + `}}` + "\n"
			feeder := &lineFeeder{line: []byte(call), off: len(call), max: b.N}
			in := io.MultiReader(bytes.NewReader([]byte(init)), feeder)
			out := &countWriter{}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			s.Run(context.Background(), stdio.NewServerStream(in, out, jsonrpc.Limits{}))
			if out.n < b.N*size || out.errors > 0 {
				b.Fatalf("wrote %d bytes and %d errors for %d calls", out.n, out.errors, b.N)
			}
		})
	}
}
