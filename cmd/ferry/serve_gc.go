package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcHeadroom is how much the heap of ferry serve may grow between two
// collections when its live heap is small.
//
// Why: a gateway's live heap is small (a few MiB, plus its sessions)
// and every call it forwards allocates (about 10 KiB, whatever the
// payload). With Go's default (GOGC=100: a collection each time the heap
// doubles, from 4 MiB on) that is a collection every few hundred calls,
// 10-25 % of the gateway's CPU (go test -bench ToolsCall in gateway:
// GOGC=400 took c16 20 B from 55 to 42 µs a call). Letting the heap grow
// by 32 MiB instead costs at most that much memory under load; a large
// live heap (thousands of sessions) keeps the default, so that the
// memory of idle sessions stays what it was (bench/idle-sessions).
const gcHeadroom = 32 << 20

// gcPercent is the GOGC that lets a heap of live bytes grow by
// gcHeadroom, or double when it is larger than that. The runtime's
// minimum heap grows with GOGC too (4 MiB at 100), and must stay below
// that: with a live heap of 1 MiB, GOGC=3200 would wait for 128 MiB.
func gcPercent(live uint64) int {
	const minHeap = 4 << 20
	p := gcHeadroom * 100 / max(live, 1)
	p = min(p, (live+gcHeadroom)*100/minHeap)
	return int(max(100, p))
}

// gcTuner sets the GOGC of ferry serve after every collection, from
// the live heap the collection found (see gcHeadroom).
type gcTuner struct {
	mu      sync.Mutex // cleanups may run at once
	stopped bool
	percent int // the last set
	runs    int // collections seen
	live    []metrics.Sample
}

// gcSentinel is allocated, then dropped, for the tuner to run after
// the next collection (runtime.AddCleanup). It holds a pointer so that
// it is not one of the tiny objects packed together, whose cleanups may
// never run.
type gcSentinel struct{ _ *byte }

// tuneGC starts a gcTuner unless the environment chose GOGC itself
// (getenv is os.Getenv); stop ends it, and gives Go's default back.
func tuneGC(getenv func(string) string) (stop func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	return startGCTuner().stop
}

func startGCTuner() *gcTuner {
	t := &gcTuner{live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	// Before the first collection, as if the live heap were Go's minimum
	// heap of 4 MiB.
	t.set(gcPercent(4 << 20))
	t.arm()
	return t
}

func (t *gcTuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.percent = 100
	debug.SetGCPercent(100) // Go's default, which GOGC unset means
}

// set sets GOGC to p, with t.mu held.
func (t *gcTuner) set(p int) {
	if p != t.percent {
		t.percent = p
		debug.SetGCPercent(p)
	}
}

// arm runs tune after the next collection.
func (t *gcTuner) arm() {
	runtime.AddCleanup(new(gcSentinel), func(t *gcTuner) { t.tune() }, t)
}

// tune runs after a collection.
func (t *gcTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.runs++
	metrics.Read(t.live)
	if v := t.live[0].Value; v.Kind() == metrics.KindUint64 {
		t.set(gcPercent(v.Uint64()))
	}
	t.arm()
}
