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
	setSSEHeaders(w.Header())
	w.WriteHeader(status)
}
