package harness

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// stallingCaller answers every call in 1 ms except the stallAt-th, which
// takes 50 ms: a server pausing once (a GC, a page fault).
type stallingCaller struct {
	n       atomic.Int64
	stallAt int64
	seen    map[string]bool
}

func (c *stallingCaller) Call(_ int, msg []byte) error {
	if c.seen[string(msg)] {
		return fmt.Errorf("message %q sent twice", msg)
	}
	c.seen[string(msg)] = true
	if c.n.Add(1) == c.stallAt {
		time.Sleep(50 * time.Millisecond)
		return nil
	}
	time.Sleep(time.Millisecond)
	return nil
}

// TestOpenLoopCountsTheStall checks the coordinated-omission correction:
// in the closed loop one stall is one slow call, but at a fixed rate every
// call the stall held back is late by the time it waited, and that shows.
func TestOpenLoopCountsTheStall(t *testing.T) {
	spinLast = 0
	defer func() { spinLast = 100 * time.Microsecond }()
	cases := []struct {
		name           string
		rate           float64
		wantCalls      int64
		p90Min, p90Max float64 // µs
	}{
		{"closed loop", 0, 150, 900, 1100},
		{"open loop at 500/s", 500, 100, 10_000, 50_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				caller := &stallingCaller{stallAt: 10, seen: map[string]bool{}}
				ph := runPhase(caller, Plan{Duration: 200 * time.Millisecond}, Payload{"small", 20}, 1, c.rate)
				if ph.Errors != 0 || ph.Verified != ph.Calls {
					t.Fatalf("errors %d (%s), verified %d of %d", ph.Errors, ph.FirstError, ph.Verified, ph.Calls)
				}
				if ph.Calls < c.wantCalls-2 || ph.Calls > c.wantCalls+2 {
					t.Errorf("%d calls, want about %d", ph.Calls, c.wantCalls)
				}
				if ph.P90us < c.p90Min || ph.P90us > c.p90Max {
					t.Errorf("p90 %.0f µs, want %.0f..%.0f", ph.P90us, c.p90Min, c.p90Max)
				}
				if ph.MaxUs < 49_000 || ph.MaxUs > 51_000 {
					t.Errorf("max %.0f µs, want the 50 ms stall", ph.MaxUs)
				}
			})
		})
	}
}

// failingCaller fails in the ways a server can.
type failingCaller struct{ err error }

func (c failingCaller) Call(int, []byte) error {
	time.Sleep(time.Millisecond)
	return c.err
}

func TestErrorsAreCountedAndFatalStops(t *testing.T) {
	cases := []struct {
		name                 string
		err                  error
		mismatches, maxCalls int64
		aborted              bool
	}{
		{"mismatch", fmt.Errorf("%w: stale text", wire.ErrMismatch), 100, 100, false},
		{"JSON-RPC error", errors.New("JSON-RPC error: -32602"), 0, 100, false},
		{"dead connection", fmt.Errorf("%w: stdout ended", wire.ErrFatal), 0, 1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ph := runPhase(failingCaller{c.err}, Plan{Duration: 100 * time.Millisecond}, Payload{"small", 20}, 1, 0)
				if ph.Verified != 0 || ph.CallsPerS != 0 || ph.P50us != 0 {
					t.Errorf("failed calls counted as good: verified %d, %v calls/s, p50 %v", ph.Verified, ph.CallsPerS, ph.P50us)
				}
				if ph.Errors != ph.Calls || ph.Calls > c.maxCalls || ph.Mismatches != min(c.mismatches, ph.Calls) {
					t.Errorf("calls %d errors %d mismatches %d", ph.Calls, ph.Errors, ph.Mismatches)
				}
				if (ph.Aborted != "") != c.aborted || ph.FirstError == "" {
					t.Errorf("aborted %q, first error %q", ph.Aborted, ph.FirstError)
				}
			})
		})
	}
}

func TestMessagesAreUniqueAndSized(t *testing.T) {
	m := newMessage(3, 20)
	seen := map[string]bool{}
	for s := int64(1); s <= 1000; s++ {
		stamp(m, s)
		if len(m) != 20 || seen[string(m)] {
			t.Fatalf("message %q (seq %d) repeated or resized", m, s)
		}
		seen[string(m)] = true
	}
	if got := string(newMessage(3, 20)[:15]); got != "w03s0000000000-" {
		t.Errorf("header %q", got)
	}
}
