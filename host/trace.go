package host

import (
	"sync"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// TraceEvent is one JSON-RPC message that crossed a traced stream.
type TraceEvent struct {
	// Time is when the message was sent or received.
	Time time.Time
	// Server is the name of the server at the other end.
	Server string
	// Out is true for a message the host sent, false for one it received.
	Out bool
	// Kind is "request", "notification", "response" or "error".
	Kind string
	// ID is the request id as on the wire (5, "abc"); empty for
	// notifications.
	ID string
	// Method is the method of a request or notification, and for a
	// response the method of the request it answers (when seen).
	Method string
	// Size is the size of the message in bytes.
	Size int
	// Latency is, for a response, the time since its request crossed the
	// stream; zero otherwise.
	Latency time.Duration
	// Message is the message as JSON.
	Message []byte
}

// maxPending bounds the requests a trace remembers while they await
// their answer.
const maxPending = 4096

// TraceStream wraps s so that sink sees every message that crosses it,
// with the latency of each answer. sink is called from the reading
// goroutine or the writer, before the message is delivered or sent; it
// must not block for long. The wrapper keeps every capability of s
// (jsonrpc.Observe), so that a traced connection takes the same paths as
// an untraced one.
func TraceStream(s jsonrpc.Stream, server string, sink func(*TraceEvent)) jsonrpc.Stream {
	t := &tracer{server: server, sink: sink,
		sent: map[jsonrpc.ID]pending{}, recv: map[jsonrpc.ID]pending{}}
	return jsonrpc.Observe(s, jsonrpc.Observer{Message: t.trace})
}

type pending struct {
	method string
	at     time.Time
}

// tracer turns the messages of one stream into TraceEvents.
type tracer struct {
	server string
	sink   func(*TraceEvent)

	mu   sync.Mutex
	sent map[jsonrpc.ID]pending // requests we sent, awaiting answers
	recv map[jsonrpc.ID]pending // requests we received, awaiting ours
}

func (t *tracer) trace(m *jsonrpc.Message, out bool) {
	raw, err := jsonrpc.AppendMessage(nil, m)
	if err != nil {
		raw = nil
	}
	ev := &TraceEvent{Time: time.Now(), Server: t.server, Out: out, Method: m.Method, Size: len(raw), Message: raw}
	if m.Size > 0 && !out {
		ev.Size = m.Size
	}
	if m.ID.IsValid() {
		ev.ID = m.ID.String()
	}
	// mine holds the requests this direction sends; theirs those it answers.
	mine, theirs := t.recv, t.sent
	if out {
		mine, theirs = t.sent, t.recv
	}
	t.mu.Lock()
	switch {
	case m.IsRequest():
		ev.Kind = "request"
		if len(mine) < maxPending {
			mine[m.ID] = pending{m.Method, ev.Time}
		}
	case m.IsNotification():
		ev.Kind = "notification"
	default:
		ev.Kind = "response"
		if m.Error != nil {
			ev.Kind = "error"
		}
		if p, ok := theirs[m.ID]; ok {
			delete(theirs, m.ID)
			ev.Method, ev.Latency = p.method, ev.Time.Sub(p.at)
		}
	}
	t.mu.Unlock()
	t.sink(ev)
}
