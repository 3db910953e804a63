package harness

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Schema is the version of the result line; 2 added the era, open-loop
// phases and p99.9.
const Schema = 2

// Result is one run: one implementation, one era, one transport.
type Result struct {
	Schema      int     `json:"schema"`
	TS          string  `json:"ts"`
	RunID       string  `json:"run_id"`
	Suite       string  `json:"suite"` // servers, clients or gateway
	Role        string  `json:"role"`  // server or client: which side is under test
	Impl        string  `json:"impl"`
	Peer        string  `json:"peer"`
	Era         string  `json:"era"`
	Transport   string  `json:"transport"`
	Target      string  `json:"target"`
	Protocol    string  `json:"protocol_version,omitempty"`
	Body        string  `json:"body,omitempty"`
	ColdStartMs float64 `json:"cold_start_ms,omitempty"`
	ColdMinMs   float64 `json:"cold_start_min_ms,omitempty"`
	ColdMaxMs   float64 `json:"cold_start_max_ms,omitempty"`
	ColdSamples int     `json:"cold_samples,omitempty"`
	ConnectMs   float64 `json:"connect_ms,omitempty"`
	PeakRSSKB   int64   `json:"peak_rss_kb"`
	RSSOf       string  `json:"rss_of"`
	Phases      []Phase `json:"phases"`
	Errors      int64   `json:"errors"`
	Mismatches  int64   `json:"mismatches"`
	Verified    int64   `json:"verified"`
	Unmatched   int64   `json:"unmatched,omitempty"`
	Fatal       string  `json:"fatal,omitempty"`
	Notes       string  `json:"notes,omitempty"`
	Host        Host    `json:"host"`
}

// Host describes the machine and the driver.
type Host struct {
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Runtime    string `json:"runtime"`
	Driver     string `json:"driver"`
}

// Flags are the measurement flags shared by loadgen and the client programs.
type Flags struct {
	Impl, Peer, Suite, Era, Out, RunID string
	Stdio, URL                         string
	ServerPID                          int
	Warmup, Duration, CallTimeout      time.Duration
	Conc, Payloads                     string
	SmallBytes, LargeBytes             int
	Open                               float64
}

// Register declares the flags on fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Impl, "impl", "", "name of the implementation under test")
	fs.StringVar(&f.Peer, "peer", "loadgen", "name of the other side")
	fs.StringVar(&f.Suite, "suite", "servers", "servers, clients or gateway (groups the report)")
	fs.StringVar(&f.Era, "era", "legacy", "protocol era: legacy or 2026-07-28")
	fs.StringVar(&f.Out, "out", "", "append the result line to this file (default stdout)")
	fs.StringVar(&f.RunID, "run-id", os.Getenv("BENCH_RUN_ID"), "run id of the result line")
	fs.StringVar(&f.Stdio, "stdio", "", "server command line, spoken to over stdio")
	fs.StringVar(&f.URL, "url", "", "Streamable HTTP URL of the server")
	fs.IntVar(&f.ServerPID, "server-pid", 0, "process id of the server, for its CPU and memory")
	fs.DurationVar(&f.Warmup, "warmup", 500*time.Millisecond, "untimed warm-up of each phase")
	fs.DurationVar(&f.Duration, "duration", 3*time.Second, "timed part of each phase")
	fs.DurationVar(&f.CallTimeout, "call-timeout", 10*time.Second, "bound on one call")
	fs.StringVar(&f.Conc, "conc", "1,16", "calls in flight, per phase")
	fs.StringVar(&f.Payloads, "payloads", "small,large", "payloads: small, large")
	fs.IntVar(&f.SmallBytes, "small-bytes", 20, "bytes of the small message")
	fs.IntVar(&f.LargeBytes, "large-bytes", 64<<10, "bytes of the large message")
	fs.Float64Var(&f.Open, "open", 0, "if > 0, an open-loop phase at this fraction of each closed-loop rate")
}

// Plan turns the flags into a plan (without the server's processes).
func (f *Flags) Plan() (Plan, error) {
	p := Plan{Warmup: f.Warmup, Duration: f.Duration, Open: f.Open}
	for s := range strings.SplitSeq(f.Conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 64 {
			return p, fmt.Errorf("-conc %q: want numbers from 1 to 64", f.Conc)
		}
		p.Conc = append(p.Conc, n)
	}
	for s := range strings.SplitSeq(f.Payloads, ",") {
		switch strings.TrimSpace(s) {
		case "small":
			p.Payloads = append(p.Payloads, Payload{"small", f.SmallBytes})
		case "large":
			p.Payloads = append(p.Payloads, Payload{"large", f.LargeBytes})
		default:
			return p, fmt.Errorf("-payloads %q: want small and/or large", f.Payloads)
		}
	}
	return p, nil
}

// MaxConc is the largest concurrency of the plan.
func (p Plan) MaxConc() int {
	m := 1
	for _, c := range p.Conc {
		m = max(m, c)
	}
	return m
}

// NewResult starts the result line of a run.
func (f *Flags) NewResult(role, transport, target, driver string) *Result {
	return &Result{Schema: Schema, TS: time.Now().UTC().Format(time.RFC3339), RunID: f.RunID, Suite: f.Suite,
		Role: role, Impl: f.Impl, Peer: f.Peer, Era: f.Era, Transport: transport, Target: target,
		Host: Host{NumCPU: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Runtime: runtime.Version(), Driver: driver}}
}

// Finish sums the phases into the run's totals.
func (r *Result) Finish() {
	for _, p := range r.Phases {
		r.Errors += p.Errors
		r.Mismatches += p.Mismatches
		r.Verified += p.Verified
		if p.Aborted != "" && r.Fatal == "" {
			r.Fatal = p.Aborted
		}
	}
}

// Write appends the result as one JSON line to path (stdout if empty).
func (r *Result) Write(path string) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "" {
		_, err = os.Stdout.Write(b)
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
