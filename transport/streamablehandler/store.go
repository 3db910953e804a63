package streamablehandler

import (
	"slices"
	"unsafe"
)

// event is one message sent on a legacy SSE stream, kept so that a client
// that lost the connection can resume with Last-Event-ID.
type event struct {
	stream int64
	seq    int64
	data   []byte // the encoded JSON-RPC message
	// keep marks an answer or a request, which the store does not drop
	// to make room for notifications.
	keep bool
}

// size is the memory an event holds: its buffer and its place in the
// store, so that the budget bounds memory, not only message bytes.
func (e *event) size() int {
	return cap(e.data) + int(unsafe.Sizeof(event{}))
}

// eventStore keeps the most recent events of one session, across its
// streams, within a byte budget: older events are dropped first. A
// notification may thus be lost to a client that reads slower than the
// server sends (a stream of progress, say), as it may be on any network;
// answers and requests are not dropped for notifications: the budget
// pushes them out of the ring into kept, which has a budget of the same
// size of its own, for the answers and requests of every stream of the
// session, its oldest dropped beyond it.
type eventStore struct {
	events    []event // oldest first
	head      int     // index of the oldest live event
	bytes     int
	limit     int
	kept      []event // answers and requests pushed out of events, oldest first
	keptBytes int
}

func (es *eventStore) add(e event) {
	es.events = append(es.events, e)
	es.bytes += e.size()
	for es.bytes > es.limit && es.head < len(es.events)-1 {
		old := es.events[es.head]
		es.bytes -= old.size()
		if old.keep {
			es.keep(old)
		}
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

// keep moves an answer or a request out of the ring, dropping the oldest
// kept ones beyond the budget (but never the one just kept).
func (es *eventStore) keep(e event) {
	es.kept = append(es.kept, e)
	es.keptBytes += e.size()
	drop := 0
	for es.keptBytes > es.limit && drop < len(es.kept)-1 {
		es.keptBytes -= es.kept[drop].size()
		drop++
	}
	if drop > 0 {
		n := copy(es.kept, es.kept[drop:])
		clear(es.kept[n:])
		es.kept = es.kept[:n]
	}
}

// after returns the events of stream with a sequence number above seq,
// in order. Events already dropped are missing: the caller compares the
// sequence numbers with the stream's.
func (es *eventStore) after(stream, seq int64) []event {
	var out []event
	for _, e := range es.kept {
		if e.stream == stream && e.seq > seq {
			out = append(out, e)
		}
	}
	fromKept := len(out) > 0
	for _, e := range es.events[es.head:] {
		if e.stream == stream && e.seq > seq {
			out = append(out, e)
		}
	}
	if fromKept {
		slices.SortFunc(out, func(a, b event) int { return int(a.seq - b.seq) })
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
	for _, e := range es.kept {
		if e.stream == stream {
			return true
		}
	}
	return false
}
