package shared

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/gateway"
)

// The events of a stream come back after the number asked, with what
// their stream's newest says (a GET stream's, the end of a request's),
// each stream bounded and expiring.
func TestStreamEventsAppendRead(t *testing.T) {
	url, _ := redisServer(t)
	s := open(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const ttl = time.Minute
	events := []gateway.StreamEvent{
		{Stream: "s:a:7", Seq: 1, Data: []byte(`{"n":1}`)},
		{Stream: "s:a:7", Seq: 2, Data: []byte(`{"n":2}`)},
		{Stream: "s:a:9", Seq: 1, Data: []byte(`{"g":1}`), Standalone: true},
		{Stream: "s:a:7", Seq: 3, Data: []byte(`{"n":3}`), Final: true},
		{Stream: "s:a:8", Seq: 1, Data: []byte(`{"m":1}`)},
		{Stream: "s:a:8", Seq: 2, Abandoned: true},
	}
	if err := s.Append(ctx, events, ttl); err != nil {
		t.Fatal(err)
	}
	// A batch sent again (a retry) is taken without an error.
	if err := s.Append(ctx, events[:2], ttl); err != nil {
		t.Errorf("appending events again: %v", err)
	}
	for _, tc := range []struct {
		stream            string
		after             int64
		ok                bool
		data              []string
		standalone, ended bool
	}{
		{"s:a:7", 0, true, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, false, true},
		{"s:a:7", 2, true, []string{`{"n":3}`}, false, true},
		{"s:a:7", 3, true, nil, false, true},
		{"s:a:9", 0, true, []string{`{"g":1}`}, true, false},
		{"s:a:8", 1, true, []string{""}, false, true},
		{"s:a:6", 0, false, nil, false, false},
	} {
		t.Run(fmt.Sprintf("%s after %d", tc.stream, tc.after), func(t *testing.T) {
			st, ok, err := s.Read(ctx, tc.stream, tc.after)
			if err != nil || ok != tc.ok {
				t.Fatalf("Read: ok %v, %v; want ok %v", ok, err, tc.ok)
			}
			var data []string
			for _, e := range st.Events {
				data = append(data, string(e.Data))
			}
			if fmt.Sprint(data) != fmt.Sprint(tc.data) || st.Standalone != tc.standalone || st.Ended != tc.ended {
				t.Errorf("got %q standalone %v ended %v, want %q %v %v", data, st.Standalone, st.Ended, tc.data, tc.standalone, tc.ended)
			}
		})
	}
	if got, err := s.rdb.TTL(ctx, s.streamKey("s:a:7")).Result(); err != nil || got <= 0 || got > ttl {
		t.Errorf("the stream's TTL is %v (%v), want at most %v", got, err, ttl)
	}

	// A stream keeps its most recent events only.
	var many []gateway.StreamEvent
	for i := range 3 * streamMaxLen {
		many = append(many, gateway.StreamEvent{Stream: "s:b:1", Seq: int64(i + 1), Data: []byte("{}")})
	}
	if err := s.Append(ctx, many, ttl); err != nil {
		t.Fatal(err)
	}
	if n, err := s.rdb.XLen(ctx, s.streamKey("s:b:1")).Result(); err != nil || n > streamMaxLen+streamMaxLen/2 {
		t.Errorf("the stream holds %d events (%v), want about %d", n, err, streamMaxLen)
	}
	st, _, _ := s.Read(ctx, "s:b:1", 0)
	if len(st.Events) != readCount || st.Events[0].Seq == 1 {
		t.Errorf("a read from the start got %d events from %d: want %d of the most recent", len(st.Events), st.Events[0].Seq, readCount)
	}
}
