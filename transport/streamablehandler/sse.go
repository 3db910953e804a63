package streamablehandler

import (
	"net/http"

	"github.com/ferrymcp/ferry/internal/ssewire"
)

// appendEvent appends one server-sent event carrying a message.
func appendEvent(b []byte, id string, data []byte) []byte {
	return ssewire.AppendEvent(b, ssewire.Event{ID: id, Data: data})
}

// startSSE writes the headers of an event stream.
func startSSE(w http.ResponseWriter, status int) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	// "servers SHOULD include the X-Accel-Buffering: no header", so that
	// proxies pass events on at once.
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(status)
}
