package streamablehandler

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// headerWriter keeps one header map, as net/http's response does for a
// handler, and discards the body.
type headerWriter struct {
	h      http.Header
	status int
}

func (w *headerWriter) Header() http.Header         { return w.h }
func (w *headerWriter) WriteHeader(status int)      { w.status = status }
func (w *headerWriter) Write(p []byte) (int, error) { return len(p), nil }

// The answers' headers are what Header.Set wrote, under canonical keys,
// and a JSON answer allocates only its Content-Length value (Header.Set
// allocated a slice for each header).
func TestResponseHeaders(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + strings.Repeat(" ", 100))
	for _, c := range []struct {
		name   string
		write  func(w http.ResponseWriter)
		want   http.Header
		allocs float64
	}{
		{"json", func(w http.ResponseWriter) { writeJSON(w, http.StatusOK, body, 0) },
			http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}}, 2},
		{"sse", func(w http.ResponseWriter) { startSSE(w, http.StatusOK) },
			http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache, no-transform"}, "X-Accel-Buffering": {"no"}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &headerWriter{h: http.Header{"Content-Length": {"7"}}}
			c.write(w)
			if !headersEqual(w.h, c.want) || w.status != http.StatusOK {
				t.Errorf("headers %v, status %d; want %v, 200", w.h, w.status, c.want)
			}
			if n := testing.AllocsPerRun(100, func() { c.write(w) }); n > c.allocs {
				t.Errorf("%v allocations per answer, want at most %v", n, c.allocs)
			}
		})
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}
