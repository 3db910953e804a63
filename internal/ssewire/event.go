package ssewire

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// Event is one server-sent event.
//
// Written with [AppendEvent], every field is optional. Read by a [Reader],
// the fields are those of the event as the WHATWG "event stream
// interpretation" dispatches it: Name is "message" when the event had no
// event field, and ID is the stream's last event ID at the event — its own
// id field, or the latest one before it.
type Event struct {
	// ID is the event's id field: what a client sends back as
	// Last-Event-ID when it reconnects.
	ID string
	// Name is the event type (the event field); empty means "message".
	Name string
	// Data is the payload. Line breaks (CR, LF, CRLF) in it become
	// separate data lines, which a reader joins with LF: they arrive as
	// LF. Its bytes are carried as they are (a reader does not replace
	// invalid UTF-8), so a JSON decoder can reject what it must.
	Data []byte
	// Retry is the reconnection time (the retry field), sent or received
	// when HasRetry is set. It is carried in whole milliseconds.
	Retry    time.Duration
	HasRetry bool
}

// AppendEvent appends the wire form of e to b: its id, event and retry
// fields when set, a data line per line of e.Data (at least one, so that
// the event is dispatched even with no data), and the blank line that
// ends the event.
//
// The SSE format cannot carry a line break in an id or event field, nor
// a NUL in an id (a reader ignores such an id): those characters are
// dropped from e.ID and e.Name.
func AppendEvent(b []byte, e Event) []byte {
	if e.ID != "" {
		b = appendField(b, "id: ", e.ID, "\r\n\x00")
	}
	if e.Name != "" {
		b = appendField(b, "event: ", e.Name, "\r\n")
	}
	if e.HasRetry {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, max(e.Retry.Milliseconds(), 0), 10)
		b = append(b, '\n')
	}
	b = appendData(b, e.Data)
	return append(b, '\n')
}

// appendField appends one "name: value" line, dropping the characters of
// drop from value.
func appendField(b []byte, name, value, drop string) []byte {
	b = append(b, name...)
	for value != "" {
		i := strings.IndexAny(value, drop)
		if i < 0 {
			b = append(b, value...)
			break
		}
		b = append(b, value[:i]...)
		value = value[i+1:]
	}
	return append(b, '\n')
}

// appendData appends data as data lines. The event stream format ends a
// line at CRLF, LF or CR: each of them starts a new data line.
func appendData(b, data []byte) []byte {
	for {
		b = append(b, "data: "...)
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			b = append(b, data...)
			return append(b, '\n')
		}
		b = append(b, data[:i]...)
		b = append(b, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// AppendComment appends text as comment lines (one per line of text),
// followed by a blank line so that the comment stands alone, like an
// event, for proxies that forward whole events. Readers ignore comments;
// servers send them to keep quiet connections open. AppendComment(b, "")
// appends ":\n\n".
func AppendComment(b []byte, text string) []byte {
	for {
		b = append(b, ':')
		i := strings.IndexAny(text, "\r\n")
		line := text
		if i >= 0 {
			line = text[:i]
		}
		if line != "" {
			b = append(b, ' ')
			b = append(b, line...)
		}
		b = append(b, '\n')
		if i < 0 {
			break
		}
		if text[i] == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		text = text[i+1:]
	}
	return append(b, '\n')
}
