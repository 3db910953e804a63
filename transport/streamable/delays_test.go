package streamable

import (
	"testing"
	"time"
)

// TestReconnectDelays: the announced retry within bounds, exactly, after
// a stream that delivered something and for the first empty one; then
// doubling, up to a quarter less, to the ceiling.
func TestReconnectDelays(t *testing.T) {
	var r reconnects
	if d := r.next(500*time.Millisecond, true); d != 500*time.Millisecond {
		t.Fatalf("after a message: %v", d)
	}
	if d := r.next(500*time.Millisecond, false); d != 500*time.Millisecond {
		t.Fatalf("first empty stream: %v", d)
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if d := r.next(500*time.Millisecond, false); d > want || d < want-want/4 {
			t.Fatalf("empty stream %d: %v, want %v to %v", i+2, d, want-want/4, want)
		}
	}
	for range 10 {
		r.next(time.Millisecond, false)
	}
	if d := r.next(time.Millisecond, false); d > maxRetry || d < maxRetry-maxRetry/4 {
		t.Fatalf("many empty streams: %v", d)
	}
	if d := r.next(time.Millisecond, true); d != minRetry {
		t.Fatalf("retry 1 ms after a message: %v, want %v", d, minRetry)
	}
	if d := r.next(24*time.Hour, true); d != maxRetry {
		t.Fatalf("retry a day: %v, want %v", d, maxRetry)
	}
}
