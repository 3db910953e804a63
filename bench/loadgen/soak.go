package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/hist"
	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// soakLine is one line of a soak's output: a window ("window"), or the
// whole run ("total").
type soakLine struct {
	Kind      string            `json:"kind"`
	TS        string            `json:"ts"`
	Minute    float64           `json:"minute"` // end of the window, since the start
	Clients   int               `json:"clients,omitempty"`
	Eras      []string          `json:"eras,omitempty"`
	Calls     int64             `json:"calls"`
	OK        int64             `json:"ok"`
	Failed    map[string]int64  `json:"failed,omitempty"` // by kind of error
	FirstErr  map[string]string `json:"first_error,omitempty"`
	Timeouts  int64             `json:"timeouts"`
	Lost      int64             `json:"sessions_lost"` // legacy sessions answered 404: the client had to initialize again
	Hung      int64             `json:"hung,omitempty"`
	P50us     float64           `json:"p50_us"`
	P99us     float64           `json:"p99_us"`
	MaxUs     float64           `json:"max_us"`
	Sample    json.RawMessage   `json:"sample,omitempty"`
	SampleErr string            `json:"sample_error,omitempty"`
}

// window counts the calls of one sampling period.
type window struct {
	mu       sync.Mutex
	calls    int64
	ok       int64
	timeouts int64
	lost     int64
	failed   map[string]int64
	firstErr map[string]string
	h        hist.H
}

func (w *window) record(lat time.Duration, kind string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls++
	switch {
	case err == nil:
		w.ok++
		w.h.Record(lat.Nanoseconds())
		return
	case kind == "timeout":
		w.timeouts++
	case kind == "session-not-found":
		w.lost++
	}
	if w.failed == nil {
		w.failed, w.firstErr = map[string]int64{}, map[string]string{}
	}
	w.failed[kind]++
	if _, ok := w.firstErr[kind]; !ok {
		w.firstErr[kind] = oneLine(err.Error())
	}
}

// take returns the window's line and latencies, and starts a new window.
func (w *window) take(kind string, since time.Time) (soakLine, hist.H) {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := soakLine{Kind: kind, TS: time.Now().UTC().Format(time.RFC3339), Minute: math.Round(time.Since(since).Minutes()*100) / 100,
		Calls: w.calls, OK: w.ok, Failed: w.failed, FirstErr: w.firstErr, Timeouts: w.timeouts, Lost: w.lost,
		P50us: usOf(w.h.Quantile(0.5)), P99us: usOf(w.h.Quantile(0.99)), MaxUs: usOf(w.h.Max())}
	h := w.h
	w.calls, w.ok, w.timeouts, w.lost = 0, 0, 0, 0
	w.failed, w.firstErr, w.h = nil, nil, hist.H{}
	return l, h
}

func (w *window) add(l soakLine, h *hist.H) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls += l.Calls
	w.ok += l.OK
	w.timeouts += l.Timeouts
	w.lost += l.Lost
	for k, n := range l.Failed {
		if w.failed == nil {
			w.failed, w.firstErr = map[string]int64{}, map[string]string{}
		}
		w.failed[k] += n
		if _, ok := w.firstErr[k]; !ok {
			w.firstErr[k] = l.FirstErr[k]
		}
	}
	w.h.Merge(h)
}

func usOf(ns int64) float64 { return math.Round(float64(ns)/100) / 10 }

// errKind sorts a failed call: a timeout (the call's deadline passed), a
// legacy session the server no longer knows (HTTP 404), another HTTP
// status, a wrong answer, or a broken connection.
func errKind(err error) string {
	var to interface{ Timeout() bool }
	msg := err.Error()
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &to) && to.Timeout()):
		return "timeout"
	case strings.HasPrefix(msg, "HTTP 404"):
		return "session-not-found"
	case strings.HasPrefix(msg, "HTTP "):
		return "http-" + msg[5:min(8, len(msg))]
	case errors.Is(err, wire.ErrMismatch):
		return "mismatch"
	case strings.HasPrefix(msg, "handshake"):
		return "handshake"
	}
	return "connection"
}

// soakConfig is what one soak does.
type soakConfig struct {
	url                    string
	eras                   []wire.Era
	clients                int
	duration, interval     time.Duration
	callTimeout, sampleDur time.Duration
	sampleCmd              string
	// dial opens one client's connection (and legacy session); by
	// default wire.DialHTTP to url, one worker, callTimeout on each call.
	dial func(wire.Era) (soakConn, error)
}

// soakConn is one client's connection.
type soakConn interface {
	Call(worker int, msg []byte) error
	Close() error
}

func (c *soakConfig) dialHTTP(era wire.Era) (soakConn, error) {
	h, err := wire.DialHTTP(c.url, era, 1, c.callTimeout)
	if err != nil {
		return nil, err // not a nil *wire.HTTP in an interface
	}
	return h, nil
}

func soakCmd(args []string) error {
	var c soakConfig
	fs := flag.NewFlagSet("loadgen soak", flag.ExitOnError)
	fs.StringVar(&c.url, "url", "", "Streamable HTTP URL of the server")
	erasF := fs.String("eras", "legacy,2026-07-28", "the clients' eras, taken in turn")
	fs.IntVar(&c.clients, "clients", 500, "clients, each with its own connection (and legacy session)")
	fs.DurationVar(&c.duration, "duration", 30*time.Minute, "how long")
	fs.DurationVar(&c.interval, "interval", time.Second, "each client calls once per interval")
	fs.DurationVar(&c.callTimeout, "call-timeout", 10*time.Second, "deadline of each call: past it the call counts as timed out")
	fs.DurationVar(&c.sampleDur, "sample", time.Minute, "one line per window of this length")
	fs.StringVar(&c.sampleCmd, "sample-cmd", "", "shell command whose JSON output is kept in each window's line")
	out := fs.String("out", "", "append the lines to this file (default stdout)")
	fs.Parse(args)
	if c.url == "" || c.clients < 1 || c.interval <= 0 || c.sampleDur <= 0 {
		return errors.New("-url, -clients ≥ 1, -interval > 0 and -sample > 0 are needed")
	}
	for s := range strings.SplitSeq(*erasF, ",") {
		e, err := wire.ParseEra(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		c.eras = append(c.eras, e)
	}
	c.dial = c.dialHTTP
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.OpenFile(*out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return soak(c, json.NewEncoder(w))
}

// soak runs the clients and writes a line per window, then the total.
func soak(c soakConfig, enc *json.Encoder) error {
	start := time.Now()
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(c.duration))
	defer cancel()
	var win window
	var wg sync.WaitGroup
	var running atomic.Int64
	for i := range c.clients {
		running.Add(1)
		wg.Go(func() {
			defer running.Add(-1)
			soakClient(ctx, c, i, start, &win)
		})
	}
	var total window
	tick := time.NewTicker(c.sampleDur)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
		done = !time.Now().Before(start.Add(c.duration))
		kind := "window"
		if done {
			kind = "last" // cut short, and the clients are ending their sessions
		}
		l, h := win.take(kind, start)
		l.Sample, l.SampleErr = runSample(c.sampleCmd)
		total.add(l, &h)
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	// Every client ends after its call in flight, which its deadline
	// bounds: one still running after that deadline and a margin hangs.
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(c.callTimeout + 5*time.Second):
	}
	l, _ := total.take("total", start)
	l.Clients, l.Hung = c.clients, running.Load()
	for _, e := range c.eras {
		l.Eras = append(l.Eras, string(e))
	}
	return enc.Encode(l)
}

// runSample runs the sample command and returns its JSON output.
func runSample(cmd string) (json.RawMessage, string) {
	if cmd == "" {
		return nil, ""
	}
	out, err := exec.Command("sh", "-c", cmd).Output()
	if err != nil {
		return nil, oneLine(err.Error())
	}
	if !json.Valid(out) {
		return nil, "not JSON: " + oneLine(string(out))
	}
	return json.RawMessage(strings.TrimSpace(string(out))), ""
}

// soakClient calls echo once per interval from its own connection until
// ctx ends, opening a new session when it has none (at the start, or
// after the server forgot it, which counts as a lost session).
func soakClient(ctx context.Context, c soakConfig, i int, start time.Time, win *window) {
	era := c.eras[i%len(c.eras)]
	next := start.Add(time.Duration(i) * c.interval / time.Duration(c.clients)) // spread over the interval
	var conn soakConn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	end := start.Add(c.duration)
	for seq := 0; next.Before(end); seq++ {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		if !time.Now().Before(end) {
			return // a call that ended late: none is due any more
		}
		next = next.Add(c.interval)
		if now := time.Now(); next.Before(now) {
			next = now // a late call does not make the next ones crowd
		}
		t0 := time.Now()
		var err error
		if conn == nil {
			conn, err = c.dial(era)
		}
		if err == nil {
			err = conn.Call(0, soakMessage(i, seq))
		}
		kind := ""
		if err != nil {
			kind = errKind(err)
			if kind == "session-not-found" || kind == "handshake" || conn == nil {
				if conn != nil {
					conn.Close()
				}
				conn = nil
			}
		}
		win.record(time.Since(t0), kind, err)
	}
}

// soakMessage is 20 bytes unique to client i's call seq.
func soakMessage(i, seq int) []byte {
	return fmt.Appendf(nil, "k%05dq%012d-", i%100000, seq%1000000000000)
}
