package streamable_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/racecheck"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// answer is a ResponseWriter that keeps the status, the headers and the
// start of the body, so that measuring the handler's allocations does not
// count a recorder's copy of each answer.
type answer struct {
	header http.Header
	status int
	size   int
	head   []byte
	tail   []byte
}

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *answer) Write(p []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	if len(a.head) < 128 {
		a.head = append(a.head, p[:min(len(p), 128-len(a.head))]...)
	}
	a.size += len(p)
	a.tail = append(a.tail[:0], p[max(0, len(p)-64):]...)
	return len(p), nil
}

// serveDirect POSTs body to h on the calling goroutine.
func serveDirect(h http.Handler, body []byte, headers map[string]string) *answer {
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	a := &answer{header: http.Header{}}
	h.ServeHTTP(a, r)
	return a
}

// lendingServer has the tools of the tests below: echo, and keep, which
// breaks the promise of LendToolArguments by keeping its arguments.
func lendingServer(lend bool, kept *[]string) *server.Server {
	s := server.New(protocol.Implementation{Name: "bodies-test", Version: "1"}, &server.Options{LendToolArguments: lend})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		return in.Message, nil
	})
	server.AddTool(s, &protocol.Tool{Name: "keep"}, func(ctx context.Context, req *server.Request, in echoIn) (string, error) {
		*kept = append(*kept, in.Message)
		return "kept", nil
	})
	return s
}

// eraCall returns the body and the headers of a tools/call in an era,
// opening a legacy session on h first.
func eraCall(t *testing.T, h http.Handler, stateless bool) func(tool, message string) ([]byte, map[string]string) {
	t.Helper()
	if stateless {
		headers := statelessHeaders("tools/call", "")
		return func(tool, message string) ([]byte, map[string]string) {
			headers["Mcp-Name"] = tool
			return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"` + message + `"},` + statelessMeta + `}}`), headers
		}
	}
	a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sid := a.header.Get("Mcp-Session-Id")
	if a.status != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q", a.status, a.head)
	}
	headers := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if a := serveDirect(h, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), headers); a.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %q", a.status, a.head)
	}
	return func(tool, message string) ([]byte, map[string]string) {
		return []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"message":"` + message + `"}}}`), headers
	}
}

// TestLentBodiesBudget checks that the handler reuses the request bodies of a
// server whose tools are only lent their arguments, and only those: 64 KiB
// calls then allocate a small fraction of their size, and otherwise at
// least their size.
func TestLentBodiesBudget(t *testing.T) {
	const calls, size = 64, 64 << 10
	message := strings.Repeat("x", size)
	for _, stateless := range []bool{false, true} {
		for _, lend := range []bool{false, true} {
			name := map[bool]string{false: "legacy", true: "stateless"}[stateless] + map[bool]string{false: "/default", true: "/lend"}[lend]
			t.Run(name, func(t *testing.T) {
				var kept []string
				h := streamablehandler.New(lendingServer(lend, &kept), &streamablehandler.Options{DisableHostCheck: true})
				defer h.Close()
				call := eraCall(t, h, stateless)
				body, headers := call("echo", message)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for range calls {
					a := serveDirect(h, body, headers)
					if a.status != http.StatusOK || a.size < size || !bytes.Contains(a.tail, []byte(`xxx"`)) {
						t.Fatalf("echo: %d, %d bytes: %s", a.status, a.size, a.head)
					}
				}
				runtime.ReadMemStats(&after)
				perCall := (after.TotalAlloc - before.TotalAlloc) / calls
				t.Logf("%d bytes allocated per call", perCall)
				// Under the race detector sync.Pool drops a random quarter
				// of what it is given, and the detector allocates for
				// itself: the figure is checked without it.
				if lend && !racecheck.Enabled && perCall > size/4 {
					t.Errorf("lending server: %d bytes allocated per 64 KiB call, want under %d", perCall, size/4)
				}
				if !lend && perCall < size {
					t.Errorf("default server: %d bytes allocated per 64 KiB call: its bodies must be its own", perCall)
				}
			})
		}
	}
}

// TestKeptArgumentsStayIntact checks the other side: a server that does
// not lend its arguments may keep them, and later requests do not change
// them.
func TestKeptArgumentsStayIntact(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		var kept []string
		h := streamablehandler.New(lendingServer(false, &kept), &streamablehandler.Options{DisableHostCheck: true})
		call := eraCall(t, h, stateless)
		var want []string
		for i := range 16 {
			message := strings.Repeat(string(rune('a'+i)), 64<<10)
			want = append(want, message)
			body, headers := call("keep", message)
			if a := serveDirect(h, body, headers); a.status != http.StatusOK {
				t.Fatalf("keep: %d %s", a.status, a.head)
			}
			// A body of the same size, which would land in the memory of
			// the kept one if that were reused.
			body, headers = call("echo", strings.Repeat("z", 64<<10))
			serveDirect(h, body, headers)
		}
		h.Close()
		for i := range want {
			if i >= len(kept) || kept[i] != want[i] {
				t.Fatalf("stateless %v: kept argument %d changed after later requests", stateless, i)
			}
		}
	}
}

// TestLentAnswersBudget checks that a client that is only lent its results
// (client.Lend) gets the bodies of its answers recycled, over a real
// HTTP connection to a lending server: 64 KiB calls then allocate, client
// and server together, a fraction of what Call does.
func TestLentAnswersBudget(t *testing.T) {
	const calls, size = 64, 64 << 10
	var kept []string
	ts, _ := serveHTTP(t, lendingServer(true, &kept), nil)
	ctx := context.Background()
	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: version}, &streamable.Transport{DisableGETStream: true})
		args := &echoIn{Message: strings.Repeat("y", size)}
		perCall := func(call func() error) uint64 {
			t.Helper()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range calls {
				if err := call(); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			return (after.TotalAlloc - before.TotalAlloc) / calls
		}
		owned := perCall(func() error {
			res, err := c.Call(ctx, "echo", args)
			if err == nil && (len(res.Content) != 1 || res.Content[0].Text != args.Message) {
				err = fmt.Errorf("echo: %+v", res)
			}
			return err
		})
		lent := perCall(func() error {
			var release func()
			res, err := c.Call(ctx, "echo", args, client.Lend(&release))
			if err == nil && (len(res.Content) != 1 || res.Content[0].Text != args.Message) {
				err = fmt.Errorf("echo: %+v", res)
			}
			release()
			return err
		})
		t.Logf("%s: %d bytes allocated per call with Call, %d lent", version, owned, lent)
		if owned < size {
			t.Errorf("%s: Call allocated %d bytes per 64 KiB call: its results must be its own", version, owned)
		}
		if !racecheck.Enabled && lent > size/3 {
			t.Errorf("%s: a lent call allocated %d bytes per 64 KiB call, client and server, want under %d", version, lent, size/3)
		}

		// A failed call lends nothing, and its release may still be
		// called.
		var release func()
		if _, err := c.Call(ctx, "no such tool", args, client.Lend(&release)); err == nil || release == nil {
			t.Errorf("%s: call of an unknown tool: error %v, release %p", version, err, release)
		} else {
			release()
		}
		c.Close()
	}
}

// TestRecycledBodiesConcurrent checks that recycling never hands one
// call's memory to another while it is in use: many calls in flight, each
// with a message of its own, to a lending server, through Call with
// client.Lend and without, every answer compared with its call's message.
func TestRecycledBodiesConcurrent(t *testing.T) {
	var kept []string
	ts, _ := serveHTTP(t, lendingServer(true, &kept), nil)
	ctx := context.Background()
	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: version}, &streamable.Transport{DisableGETStream: true})
		const workers, calls = 8, 40
		errs := make(chan error, workers)
		for w := range workers {
			go func() {
				for i := range calls {
					// Sizes vary so that pooled buffers change hands
					// between bodies of different lengths.
					message := fmt.Sprintf("%d-%d-%s", w, i, strings.Repeat(string(rune('a'+w)), 1000+(w*7919+i*104729)%(48<<10)))
					args := &echoIn{Message: message}
					var err error
					if i%2 == 0 {
						var release func()
						var res *protocol.CallToolResult
						if res, err = c.Call(ctx, "echo", args, client.Lend(&release)); err == nil && (len(res.Content) != 1 || res.Content[0].Text != message) {
							err = fmt.Errorf("worker %d call %d: the answer is not the message", w, i)
						}
						release()
					} else {
						var res *protocol.CallToolResult
						if res, err = c.Call(ctx, "echo", args); err == nil && (len(res.Content) != 1 || res.Content[0].Text != message) {
							err = fmt.Errorf("worker %d call %d: the answer is not the message", w, i)
						}
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
		}
		for range workers {
			if err := <-errs; err != nil {
				t.Errorf("%s: %v", version, err)
			}
		}
		c.Close()
	}
}
