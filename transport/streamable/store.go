package streamable

// event is one message sent on a legacy SSE stream, kept so that a client
// that lost the connection can resume with Last-Event-ID.
type event struct {
	stream int64
	seq    int64
	data   []byte // the encoded JSON-RPC message
}

// eventStore keeps the most recent events of one session, across its
// streams, within a byte budget: older events are dropped first. A stream
// whose reader falls behind the budget cannot be resumed exactly, and is
// ended instead of silently skipping messages.
type eventStore struct {
	events []event // oldest first
	head   int     // index of the oldest live event
	bytes  int
	limit  int
}

func (es *eventStore) add(e event) {
	es.events = append(es.events, e)
	es.bytes += len(e.data)
	for es.bytes > es.limit && es.head < len(es.events)-1 {
		es.bytes -= len(es.events[es.head].data)
		es.events[es.head] = event{}
		es.head++
	}
	// Compact once the dropped prefix dominates, so memory stays bounded.
	if es.head > 64 && es.head > len(es.events)/2 {
		n := copy(es.events, es.events[es.head:])
		clear(es.events[n:])
		es.events = es.events[:n]
		es.head = 0
	}
}

// after returns the events of stream with a sequence number above seq,
// in order. Events already dropped are missing: the caller compares the
// count with the stream's last sequence number.
func (es *eventStore) after(stream, seq int64) []event {
	var out []event
	for _, e := range es.events[es.head:] {
		if e.stream == stream && e.seq > seq {
			out = append(out, e)
		}
	}
	return out
}

// has reports whether any event of stream is still kept.
func (es *eventStore) has(stream int64) bool {
	for _, e := range es.events[es.head:] {
		if e.stream == stream {
			return true
		}
	}
	return false
}
