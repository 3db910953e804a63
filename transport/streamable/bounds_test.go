package streamable_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// stalledBody gives a few bytes of a body, then blocks until released,
// telling when the reader came back for more.
type stalledBody struct {
	first   io.Reader
	waiting chan<- struct{}
	release <-chan struct{}
	once    sync.Once
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if n, _ := b.first.Read(p); n > 0 {
		return n, nil
	}
	b.once.Do(func() { b.waiting <- struct{}{} })
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

func (b *stalledBody) Close() error { return nil }

// TestBodyMemoryGrowsWithBytes: a request that announces a large body
// and sends a little of it makes the handler hold memory for what
// arrived, not for what was announced (on a12c33f, each such request
// held the 16 MiB it announced: 20 of them 320 MiB).
func TestBodyMemoryGrowsWithBytes(t *testing.T) {
	const conns, announced = 20, 16 << 20
	h := streamablehandler.New(testServer(), nil)
	defer h.Close()
	waiting, release := make(chan struct{}, conns), make(chan struct{})
	var wg sync.WaitGroup
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range conns {
		body := &stalledBody{first: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`),
			waiting: waiting, release: release}
		r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
		r.Body, r.ContentLength = body, announced
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.ServeHTTP(&answer{header: http.Header{}}, r)
		}()
	}
	for range conns {
		<-waiting
	}
	var during runtime.MemStats
	runtime.ReadMemStats(&during)
	close(release)
	wg.Wait()
	held := int64(during.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d requests announcing %d MiB, each sending 100 bytes: %d KiB held", conns, announced>>20, held>>10)
	if held > conns*256<<10 {
		t.Errorf("%d stalled requests held %d KiB: memory taken for bytes announced, not arrived", conns, held>>10)
	}
}

// gatedAnswer is a ResponseWriter whose writes block, after the first,
// until the gate opens: a client that stopped reading for a while.
type gatedAnswer struct {
	answer
	mu     sync.Mutex
	writes int
	gate   chan struct{}
	body   strings.Builder
}

func (g *gatedAnswer) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.writes++
	first := g.writes == 1
	g.mu.Unlock()
	if !first {
		<-g.gate
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.body.Write(p)
	return g.answer.Write(p)
}

// floodServer has a tool that sends n log messages of size bytes before
// its answer, and tells when it is done.
func floodServer(n, size int, done chan<- struct{}) *server.Server {
	s := server.New(protocol.Implementation{Name: "flood", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "flood"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		defer func() { done <- struct{}{} }()
		for i := range n {
			req.Progress(ctx, float64(i), float64(n), strings.Repeat("p", size))
		}
		return "the answer", nil
	})
	return s
}

// TestLegacyAnswerOutlivesNotifications: when a legacy client reads its
// stream slower than the tool sends notifications, the event store drops
// notifications, never the call's answer (on a12c33f the stream ended
// without it: "events were dropped before they could be sent").
func TestLegacyAnswerOutlivesNotifications(t *testing.T) {
	const n, size, store = 400, 1 << 10, 64 << 10 // 400 KiB of progress for a 64 KiB store
	done := make(chan struct{}, 1)
	h := streamablehandler.New(floodServer(n, size, done), &streamablehandler.Options{EventStoreBytes: store})
	defer h.Close()
	init := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sid := init.header.Get("Mcp-Session-Id")
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	serveDirect(h, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr)

	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"flood"}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	g := &gatedAnswer{answer: answer{header: http.Header{}}, gate: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(g, r)
	}()
	<-done // every notification and the answer are queued
	close(g.gate)
	<-served
	body := g.body.String()
	progress := strings.Count(body, "notifications/progress")
	t.Logf("%d of %d progress notifications reached the client, answer: %v", progress, n, strings.Contains(body, "the answer"))
	if !strings.Contains(body, `"text":"the answer"`) {
		t.Fatalf("the answer was dropped; the stream (%d bytes) ends with %q", len(body), body[max(0, len(body)-200):])
	}
	if progress*size > 2*store {
		t.Errorf("%d progress notifications kept in a store of %d bytes", progress, store)
	}
}

// openSessions opens n legacy sessions with bare initialize requests;
// ready ones also send notifications/initialized. It returns their ids.
func openSessions(t *testing.T, h http.Handler, n int, ready bool) []string {
	t.Helper()
	var ids []string
	for range n {
		a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		sid := a.header.Get("Mcp-Session-Id")
		if a.status != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d %s", a.status, a.head)
		}
		if ready {
			serveDirect(h, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
		}
		ids = append(ids, sid)
	}
	return ids
}

// TestIdleSessionsCostNoGoroutines: a legacy session between requests
// holds no goroutine (on a12c33f, four each).
func TestIdleSessionsCostNoGoroutines(t *testing.T) {
	h := streamablehandler.New(testServer(), nil)
	defer h.Close()
	openSessions(t, h, 1, true) // the server's own goroutines, started once
	time.Sleep(10 * time.Millisecond)
	before := runtime.NumGoroutine()
	const n = 200
	openSessions(t, h, n, true)
	time.Sleep(10 * time.Millisecond)
	per := float64(runtime.NumGoroutine()-before) / n
	t.Logf("%d idle sessions: %.2f goroutines each", n, per)
	if per > 0.05 {
		t.Errorf("%d idle sessions hold %.2f goroutines each", n, per)
	}
}

// TestSessionTableSheds: a table filled by bare initialize requests, or
// by idle sessions, makes room for a new client by ending the sessions
// that never completed their handshake first, then the longest idle; a
// table of busy sessions still refuses (on a12c33f every new client got
// 503 until the sessions expired, 30 minutes later).
func TestSessionTableSheds(t *testing.T) {
	for _, ready := range []bool{false, true} {
		h := streamablehandler.New(testServer(), &streamablehandler.Options{MaxSessions: 100})
		old := openSessions(t, h, 100, ready)
		for i := range 3 {
			a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`), nil)
			if a.status != http.StatusOK {
				t.Fatalf("handshake complete: %v; newcomer %d: %d %s", ready, i, a.status, a.head)
			}
		}
		if n := h.Sessions(); n > 100 {
			t.Errorf("%d sessions open, bound 100", n)
		}
		// The oldest went first.
		a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), map[string]string{"Mcp-Session-Id": old[0], "MCP-Protocol-Version": "2025-11-25"})
		if a.status != http.StatusNotFound {
			t.Errorf("handshake complete: %v; the oldest session is still open: %d", ready, a.status)
		}
		h.Close()
	}
}

// TestEventStoreMemoryWithinBudget: a legacy session's event store holds
// what its budget says, counted in memory, not in message bytes. On main
// before this test every event kept the 4 KiB buffer it was encoded in,
// so a 256 KiB store of small progress notifications held 10 MiB (the
// soak found 150 MiB held by four sessions whose clients did not read).
func TestEventStoreMemoryWithinBudget(t *testing.T) {
	const n, store = 20_000, 256 << 10
	done := make(chan struct{}, 1)
	h := streamablehandler.New(floodServer(n, 0, done), &streamablehandler.Options{EventStoreBytes: store})
	defer h.Close()
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	init := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	hdr["Mcp-Session-Id"] = init.header.Get("Mcp-Session-Id")
	serveDirect(h, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), hdr)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := serveDirect(h, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"flood"}}`), hdr)
	<-done
	if !bytes.Contains(a.tail, []byte("the answer")) {
		t.Fatalf("no answer: the stream ends with %q", a.tail)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d progress notifications (%d bytes each) through a %d KiB store: %d KiB held after", n, a.size/n, store>>10, held>>10)
	if held > 2*store {
		t.Errorf("a %d KiB event store holds %d KiB", store>>10, held>>10)
	}
	runtime.KeepAlive(h)
}
