package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercent(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, 800},
		{1 << 20, 825},
		{4 << 20, 800},
		{16 << 20, 200},
		{32 << 20, 100},
		{1 << 30, 100},
	} {
		if got := gcPercent(tt.live); got != tt.want {
			t.Errorf("gcPercent(%d) = %d, want %d", tt.live, got, tt.want)
		}
	}
}

// A GOGC from the environment is left alone.
func TestTuneGCLeavesGOGCOfTheEnvironment(t *testing.T) {
	stop := tuneGC(func(k string) string { return map[string]string{"GOGC": "50"}[k] })
	defer stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC set to %d although the environment chose it", p)
	}
}

// The tuner sets GOGC after each collection from the live heap it
// found, and stopping it gives Go's default back.
func TestGCTunerFollowsTheLiveHeap(t *testing.T) {
	tu := startGCTuner()
	defer tu.stop()
	current := func() (p, want int, runs int) {
		tu.mu.Lock() // no tune meanwhile
		defer tu.mu.Unlock()
		p = debug.SetGCPercent(tu.percent)
		if tu.runs > 0 {
			return p, gcPercent(tu.live[0].Value.Uint64()), tu.runs
		}
		return p, gcPercent(4 << 20), 0
	}
	if p, want, _ := current(); p != want || p != 800 {
		t.Errorf("GOGC before a collection: %d, want %d", p, want)
	}
	// The tuner runs after a collection, on the runtime's cleanup
	// goroutine: wait for it, within a bound.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		p, want, runs := current()
		if runs >= 2 { // it armed itself again after the first
			if p != want {
				t.Errorf("GOGC %d after %d collections, want %d for the live heap", p, runs, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tuner ran %d times in 10 s of collections", runs)
		}
	}
	tu.stop()
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC after stop: %d, want 100", p)
	}
}
