// Package harness runs the benchmark's phases against anything that can
// call echo — the load generator's own wire client or an SDK's client —
// and writes the result line. One phase is one payload size at one
// concurrency: an untimed warm-up, then a timed part in which every call
// is checked and its latency recorded in a histogram.
package harness

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/hist"
	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// Caller calls echo with msg from worker's goroutine and checks the answer.
type Caller interface {
	Call(worker int, msg []byte) error
}

// CallerFunc is a function as a Caller.
type CallerFunc func(worker int, msg []byte) error

// Call calls f.
func (f CallerFunc) Call(worker int, msg []byte) error { return f(worker, msg) }

// Payload is a message size.
type Payload struct {
	Name  string
	Bytes int
}

// Plan is what one run measures.
type Plan struct {
	Warmup, Duration time.Duration
	Conc             []int
	Payloads         []Payload
	// Open, when above 0, adds after each closed-loop phase an open-loop
	// phase sending at Open times the rate the closed loop reached, with
	// latency measured from each call's intended send time (so a stall
	// counts against every call it delays: no coordinated omission).
	Open float64
	// Server is the process tree whose CPU is the server's.
	Server []int
}

// Phase is the outcome of one phase.
type Phase struct {
	Conc         int     `json:"conc"`
	Payload      string  `json:"payload"`
	PayloadBytes int     `json:"payload_bytes"`
	Mode         string  `json:"mode"` // closed, or open (fixed rate)
	TargetRate   float64 `json:"target_rate,omitempty"`
	WarmupCalls  int64   `json:"warmup_calls"`
	Calls        int64   `json:"calls"`
	Errors       int64   `json:"errors"`
	Mismatches   int64   `json:"mismatches"`
	Verified     int64   `json:"verified"`
	DurationS    float64 `json:"duration_s"`
	CallsPerS    float64 `json:"calls_per_s"`
	P50us        float64 `json:"p50_us"`
	P90us        float64 `json:"p90_us"`
	P99us        float64 `json:"p99_us"`
	P999us       float64 `json:"p999_us"`
	MaxUs        float64 `json:"max_us"`
	DriverCPUus  float64 `json:"driver_cpu_us_per_call"`
	ServerCPUus  float64 `json:"server_cpu_us_per_call"`
	OtherCPUPct  float64 `json:"other_cpu_pct"`
	FirstError   string  `json:"first_error,omitempty"`
	Aborted      string  `json:"aborted,omitempty"`
}

// Run runs every phase of the plan, stopping after a fatal error.
func Run(c Caller, p Plan) []Phase {
	var out []Phase
	for _, pl := range p.Payloads {
		for _, conc := range p.Conc {
			ph := runPhase(c, p, pl, conc, 0)
			out = append(out, ph)
			if ph.Aborted != "" {
				return out
			}
			if p.Open > 0 && ph.CallsPerS > 0 {
				op := runPhase(c, p, pl, conc, p.Open*ph.CallsPerS)
				out = append(out, op)
				if op.Aborted != "" {
					return out
				}
			}
		}
	}
	return out
}

// tally is what the workers of a phase count together.
type tally struct {
	calls, errors, mismatches atomic.Int64
	mu                        sync.Mutex
	firstErr, fatal           string
	stop                      atomic.Bool
}

func (t *tally) fail(err error) {
	t.errors.Add(1)
	if errors.Is(err, wire.ErrMismatch) {
		t.mismatches.Add(1)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.firstErr == "" {
		t.firstErr = err.Error()
	}
	if errors.Is(err, wire.ErrFatal) && t.fatal == "" {
		t.fatal = err.Error()
		t.stop.Store(true)
	}
}

func runPhase(c Caller, p Plan, pl Payload, conc int, rate float64) Phase {
	ph := Phase{Conc: conc, Payload: pl.Name, PayloadBytes: pl.Bytes, Mode: "closed"}
	if rate > 0 {
		ph.Mode, ph.TargetRate = "open", math.Round(rate)
	}
	msgs := make([][]byte, conc)
	for w := range msgs {
		msgs[w] = newMessage(w, pl.Bytes)
	}
	var seq atomic.Int64
	if p.Warmup > 0 {
		var warm tally
		drive(c, msgs, &seq, &warm, time.Now().Add(p.Warmup), rate, nil)
		ph.WarmupCalls = warm.calls.Load()
		if warm.fatal != "" {
			ph.Aborted, ph.FirstError = warm.fatal, warm.firstErr
			return ph
		}
	}
	runtime.GC() // the warm-up's garbage is not the timed part's work
	hists := make([]hist.H, conc)
	var t tally
	cpu0, srv0, busy0 := selfCPU(), treeCPU(p.Server), MachineBusy()
	start := time.Now()
	drive(c, msgs, &seq, &t, start.Add(p.Duration), rate, hists)
	elapsed := time.Since(start)
	cpu, srv, busy := selfCPU()-cpu0, treeCPU(p.Server)-srv0, MachineBusy()-busy0
	var all hist.H
	for i := range hists {
		all.Merge(&hists[i])
	}
	ph.Calls, ph.Errors, ph.Mismatches = t.calls.Load(), t.errors.Load(), t.mismatches.Load()
	ph.Verified = int64(all.Count())
	ph.DurationS = round(elapsed.Seconds(), 3)
	ph.CallsPerS = round(float64(ph.Verified)/elapsed.Seconds(), 1)
	us := func(ns int64) float64 { return round(float64(ns)/1000, 1) }
	ph.P50us, ph.P90us, ph.P99us = us(all.Quantile(0.5)), us(all.Quantile(0.9)), us(all.Quantile(0.99))
	ph.P999us, ph.MaxUs = us(all.Quantile(0.999)), us(all.Max())
	if ph.Calls > 0 {
		ph.DriverCPUus = round(float64(cpu)/float64(ph.Calls), 2)
		if len(p.Server) > 0 {
			ph.ServerCPUus = round(float64(srv)/float64(ph.Calls), 2)
		}
	}
	ph.OtherCPUPct = round(100*float64(max(busy-cpu-srv, 0))/float64(elapsed.Microseconds()), 1)
	ph.FirstError, ph.Aborted = t.firstErr, t.fatal
	return ph
}

// drive runs one worker per message until end; with rate > 0 each worker
// keeps its share of a fixed schedule. hists (nil in the warm-up) get the
// latency of every good call.
func drive(c Caller, msgs [][]byte, seq *atomic.Int64, t *tally, end time.Time, rate float64, hists []hist.H) {
	var wg sync.WaitGroup
	for w := range msgs {
		wg.Go(func() {
			var h *hist.H
			if hists != nil {
				h = &hists[w]
			}
			if rate > 0 {
				openLoop(c, w, len(msgs), msgs[w], seq, t, end, rate, h)
			} else {
				closedLoop(c, w, msgs[w], seq, t, end, h)
			}
		})
	}
	wg.Wait()
}

func closedLoop(c Caller, w int, msg []byte, seq *atomic.Int64, t *tally, end time.Time, h *hist.H) {
	for !t.stop.Load() {
		start := time.Now()
		if !start.Before(end) {
			return
		}
		call(c, w, msg, seq, t, start, h)
	}
}

// openLoop sends worker w's calls at start + (k*n + w)/rate: latency
// counts from that intended time, so a call the schedule had to hold back
// behind a slow one carries the wait it suffered.
func openLoop(c Caller, w, n int, msg []byte, seq *atomic.Int64, t *tally, end time.Time, rate float64, h *hist.H) {
	start := time.Now()
	interval := time.Duration(float64(time.Second) * float64(n) / rate)
	first := time.Duration(float64(time.Second) * float64(w) / rate)
	for k := 0; !t.stop.Load(); k++ {
		intended := start.Add(first + time.Duration(k)*interval)
		if !intended.Before(end) {
			return
		}
		waitUntil(intended)
		call(c, w, msg, seq, t, intended, h)
	}
}

// spinLast is how much of a wait waitUntil yields through instead of
// sleeping: the runtime's timers overshoot by tens of µs, more than a fast
// call takes. (0 in tests, whose clock moves only when all sleep.)
var spinLast = 100 * time.Microsecond

// waitUntil sleeps until shortly before at and yields until at.
func waitUntil(at time.Time) {
	if d := time.Until(at); d > 2*spinLast {
		time.Sleep(d - spinLast)
	} else if spinLast == 0 && d > 0 {
		time.Sleep(d)
	}
	for time.Now().Before(at) {
		runtime.Gosched()
	}
}

func call(c Caller, w int, msg []byte, seq *atomic.Int64, t *tally, from time.Time, h *hist.H) {
	stamp(msg, seq.Add(1))
	err := c.Call(w, msg)
	done := time.Now()
	t.calls.Add(1)
	if err != nil {
		t.fail(err)
		return
	}
	if h != nil {
		h.Record(done.Sub(from).Nanoseconds())
	}
}

const filler = "abcdefghijklmnopqrstuvwxyz0123456789"

// newMessage makes worker w's message of n bytes (at least 16): a header
// "wWWsSSSSSSSSSS-" that stamp rewrites for every call, so no two calls
// carry the same text, then filler. Only [a-z0-9-]: no JSON escapes.
func newMessage(w, n int) []byte {
	n = max(n, 16)
	m := make([]byte, n)
	copy(m, fmt.Sprintf("w%02ds%010d-", w%100, 0))
	for i := 15; i < n; i++ {
		m[i] = filler[i%len(filler)]
	}
	return m
}

// stamp writes the call's sequence number into the message header.
func stamp(m []byte, s int64) {
	var b [10]byte
	d := strconv.AppendInt(b[:0], s%1e10, 10)
	copy(m[4:14], "0000000000")
	copy(m[14-len(d):14], d)
}

func round(v float64, digits int) float64 {
	p := math.Pow10(digits)
	return math.Round(v*p) / p
}
