package streamablehandler

import (
	"strings"
	"testing"
)

// TestEventStoreKeepsAnswers: notifications make room for newer ones;
// answers and requests stay, within a budget of their own.
func TestEventStoreKeepsAnswers(t *testing.T) {
	data := []byte(strings.Repeat("n", 10))
	es := eventStore{limit: 10 * (&event{data: data}).size()} // ten events
	es.add(event{stream: 1, seq: 1, data: data})
	es.add(event{stream: 1, seq: 2, data: data, keep: true}) // a request to the client
	for seq := int64(3); seq < 100; seq++ {
		es.add(event{stream: 1, seq: seq, data: data})
	}
	es.add(event{stream: 1, seq: 100, data: data, keep: true}) // the answer
	for seq := int64(1); seq < 50; seq++ {
		es.add(event{stream: 2, seq: seq, data: data})
	}
	got := es.after(1, 0)
	if len(got) != 2 || got[0].seq != 2 || got[1].seq != 100 {
		var seqs []int64
		for _, e := range got {
			seqs = append(seqs, e.seq)
		}
		t.Fatalf("stream 1 after the flood: events %v, want the request (2) and the answer (100)", seqs)
	}
	if es.bytes > es.limit || es.keptBytes > es.limit {
		t.Errorf("store holds %d + %d bytes, limit %d each", es.bytes, es.keptBytes, es.limit)
	}
	// Kept events have their budget: the oldest go beyond it.
	for stream := int64(3); stream < 30; stream++ {
		es.add(event{stream: stream, seq: 1, data: data, keep: true})
		for seq := int64(2); seq < 20; seq++ {
			es.add(event{stream: stream, seq: seq, data: data})
		}
	}
	if es.keptBytes > es.limit || len(es.kept) == 0 {
		t.Errorf("kept: %d events, %d bytes, limit %d", len(es.kept), es.keptBytes, es.limit)
	}
}
