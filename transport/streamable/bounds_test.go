package streamable_test

import (
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ferrymcp/ferry/transport/streamable"
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
	h := streamable.NewHandler(testServer(), nil)
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
