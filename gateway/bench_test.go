package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// BenchmarkToolsCall is a tools/call through the gateway over Streamable
// HTTP (legacy session) to the test server: in the same process over an
// in-memory pipe (the gateway's own cost, allocations included), or a
// child process over stdio (as ferry serve runs it); one call in flight
// (c1) or 16 at once on the one session (c16), as the harness drives it.
//
// ferry serve observes every request by default (metrics, and spans
// with OpenTelemetry's no-op provider unless OTLP is configured): the
// observed variants are what it runs.
func BenchmarkToolsCall(b *testing.B) {
	exe, _ := os.Executable()
	for _, observed := range []bool{false, true} {
		for _, upstream := range []string{"memory", "stdio"} {
			for _, conc := range []int{1, 16} {
				for _, size := range []int{20, 64 << 10} {
					name := fmt.Sprintf("%s/c%d/20B", upstream, conc)
					if size > 20 {
						name = fmt.Sprintf("%s/c%d/64KiB", upstream, conc)
					}
					if observed {
						name = "observed/" + name
					}
					b.Run(name, func(b *testing.B) { benchToolsCall(b, upstream, exe, conc, size, observed) })
				}
			}
		}
	}
}

func benchToolsCall(b *testing.B, upstream, exe string, conc, size int, observed bool) {
	// The upstream calls' timeouts are those ferry serve sets: no idle
	// bound per call (its clients have their own), a maximum duration.
	opts := &Options{Prefix: "never", Host: host.Options{RequestTimeout: -1, MaxRequestTimeout: 10 * time.Minute}}
	if observed {
		obs, err := observe.New(&observe.Options{TracerProvider: noop.NewTracerProvider()})
		if err != nil {
			b.Fatal(err)
		}
		opts.Middleware = []intercept.Middleware{obs.Middleware("gateway")}
		opts.ClientOptions = observeUpstream(obs)
	}
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
	cpu := processCPU()
	defer func() { b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e3, "cpu-µs/op") }()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				// Lent, as the harness's client reads its answers: the
				// memory of one serves the next, and what is allocated
				// is the gateway's.
				var release func()
				res, err := c.Call(ctx, "echo", msg, client.Lend(&release))
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

// processCPU is the CPU time the process used so far (user and system,
// all threads), in nanoseconds: on a machine shared with other work, a
// steadier measure of a call's cost than its wall time.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkToolCallParams is the gateway's reading of a tools/call's
// params on the way upstream (toolCall), for arguments of 20 bytes and
// of 64 KiB.
func BenchmarkToolCallParams(b *testing.B) {
	for _, size := range []int{20, 64 << 10} {
		b.Run(sizeName(size), func(b *testing.B) {
			onToolCall(b, size, func(ir *intercept.Request) {
				req := server.RequestOf(ir)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := toolCall(req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkObservedToolCall is what ferry serve's observing costs a
// tools/call whose result the gateway passes on undecoded (a raw echo of
// the arguments): its server middleware, and its client middleware
// around the forwarding, which is left out.
func BenchmarkObservedToolCall(b *testing.B) {
	benchmarkObserved(b, func(raw jsontext.Value) intercept.Result { return intercept.Result{Value: raw} })
}

// BenchmarkForwardedResult is what the answer of a tools/call costs the
// gateway once its upstream sent it, the transports left out: passOn,
// which adapts the raw result for the client, and the observing of ferry
// serve (its server middleware, and its client middleware around the
// forwarding), which count the result by what passOn found of it.
func BenchmarkForwardedResult(b *testing.B) {
	benchmarkObserved(b, forwarded)
}

// benchmarkObserved runs an observed tools/call of 20 bytes and of 64
// KiB whose forwarding returns result(raw), raw being the echo's answer.
func benchmarkObserved(b *testing.B, result func(jsontext.Value) intercept.Result) {
	obs, err := observe.New(&observe.Options{TracerProvider: noop.NewTracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{20, 64 << 10} {
		b.Run(sizeName(size), func(b *testing.B) {
			raw := jsontext.Value(`{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}]}`)
			// The forwarding's call upstream, observed by the client's
			// middleware, whose result is the raw echo the client read
			// (its isError found by the decoder), made result(raw).
			call := obs.SendingMiddleware("a")(func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
				return intercept.Result{Value: raw}, nil
			})
			up := &intercept.Request{Method: protocol.MethodToolsCall}
			h := obs.Middleware("gateway")(func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
				res, err := call(ctx, up)
				if err != nil {
					return res, err
				}
				return result(res.Value.(jsontext.Value)), nil
			})
			onToolCall(b, size, func(req *intercept.Request) {
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := h(ctx, req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// forwarded is what callTool does with a raw result it passes on to a
// legacy client.
func forwarded(raw jsontext.Value) intercept.Result {
	out, isError, ok := passOn(raw, nil, false)
	if !ok {
		panic("passOn failed")
	}
	return intercept.Result{Value: out, IsError: isError}
}

func sizeName(size int) string {
	if size < 1<<10 {
		return fmt.Sprintf("%dB", size)
	}
	return fmt.Sprintf("%dKiB", size>>10)
}

// onToolCall runs f in the middleware of a server that a client calls
// the tool echo of, with a message of size bytes, over an in-memory pipe:
// f gets the request as the server decoded it.
func onToolCall(b *testing.B, size int, f func(req *intercept.Request)) {
	b.Helper()
	ran := false
	mw := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			if req.Method == protocol.MethodToolsCall && !ran {
				ran = true
				f(req)
			}
			return next(ctx, req)
		}
	}
	a, c := memory.NewPipe(jsonrpc.Limits{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go testServer("a", mw).Run(ctx, a)
	cl, err := client.Connect(ctx, client.StreamTransport{Stream: c}, &client.Options{ProtocolVersion: protocol.LatestLegacyVersion})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Call(ctx, "echo", map[string]string{"message": strings.Repeat("x", size)}); err != nil {
		b.Fatal(err)
	}
	if !ran {
		b.Fatal("the middleware saw no tools/call")
	}
}
