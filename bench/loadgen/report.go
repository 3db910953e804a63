package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// The order of the report: suites, eras, transports, cells.
var (
	suites     = []string{"servers", "clients", "gateway", "scale"}
	eras       = []string{"legacy", "2026-07-28"}
	transports = []string{"stdio", "http"}
	cells      = []cell{{1, "small"}, {16, "small"}, {1, "large"}, {16, "large"}}
)

type cell struct {
	conc    int
	payload string
}

func (c cell) String() string {
	size := "20 B"
	if c.payload == "large" {
		size = "64 KiB"
	}
	return fmt.Sprintf("c%d %s", c.conc, size)
}

// results are the lines of the result files, in their order.
type results []*harness.Result

func load(paths []string) (results, error) {
	var rs results
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<22)
		for n := 1; sc.Scan(); n++ {
			var r harness.Result
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				f.Close()
				return nil, fmt.Errorf("%s:%d: %w", p, n, err)
			}
			if r.Suite == "" {
				r.Suite = "servers"
			}
			rs = append(rs, &r)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return rs, nil
}

// where returns the results of one table.
func (rs results) where(suite, era, transport string) results {
	var out results
	for _, r := range rs {
		if r.Suite == suite && r.Era == era && r.Transport == transport {
			out = append(out, r)
		}
	}
	return out
}

func (rs results) impl(name string) *harness.Result {
	for _, r := range rs {
		if r.Impl == name {
			return r
		}
	}
	return nil
}

// phase returns the closed- or open-loop phase of a cell.
func phase(r *harness.Result, c cell, mode string) *harness.Phase {
	if r == nil {
		return nil
	}
	for i := range r.Phases {
		p := &r.Phases[i]
		m := p.Mode
		if m == "" {
			m = "closed"
		}
		if p.Conc == c.conc && p.Payload == c.payload && m == mode {
			return p
		}
	}
	return nil
}

// ceilings names the ceiling of each suite: the row every other row is
// a percentage of.
type ceilings map[string]string

func parseCeilings(s string) ceilings {
	c := ceilings{}
	for kv := range strings.SplitSeq(s, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			c[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return c
}

const defaultCeilings = "servers=raw,clients=raw,gateway=ferry-http,scale=1-replica"

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("loadgen report", flag.ExitOnError)
	title := fs.String("title", "MCP benchmark", "title of the report")
	ceil := fs.String("ceiling", defaultCeilings, "the ceiling row of each suite, SUITE=IMPL,...")
	goal := fs.String("goal", "ferry", "the implementation whose cells are checked against ⅔ of the ceiling")
	fs.Parse(args)
	rs, err := load(fs.Args())
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "# %s\n", *title)
	report(w, rs, parseCeilings(*ceil), *goal)
	return w.Flush()
}

func report(w io.Writer, rs results, ceil ceilings, goal string) {
	for _, suite := range suites {
		for _, era := range eras {
			for _, tr := range transports {
				if t := rs.where(suite, era, tr); len(t) > 0 {
					table(w, t, suite, era, tr, ceil[suite])
				}
			}
		}
	}
	policyCosts(w, rs)
	openLoop(w, rs)
	goals(w, rs, ceil, goal)
	machineLoad(w, rs)
	problems(w, rs)
}

var suiteTitle = map[string]string{
	"servers": "Servers, driven by loadgen",
	"clients": "Clients, each driving the raw server",
	"gateway": "Gateways over Streamable HTTP",
	"scale":   "Replicas of ferry serve sharing Redis, over Streamable HTTP",
}

func table(w io.Writer, t results, suite, era, tr, ceiling string) {
	fmt.Fprintf(w, "\n## %s: %s, %s\n\n", suiteTitle[suite], era, tr)
	fmt.Fprintf(w, "calls/s, %% of `%s`; then p50 / p99 / p99.9 latency in µs\n\n", ceiling)
	fmt.Fprint(w, "| impl |")
	for _, c := range cells {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, " peak RSS | start ms |\n|---|")
	fmt.Fprint(w, strings.Repeat("---:|", len(cells)+2), "\n")
	top := t.impl(ceiling)
	for _, r := range t {
		fmt.Fprintf(w, "| %s |", r.Impl)
		for _, c := range cells {
			fmt.Fprintf(w, " %s |", cellText(phase(r, c, "closed"), phase(top, c, "closed")))
		}
		start := r.ColdStartMs
		if r.Role == "client" {
			start = r.ConnectMs
		}
		fmt.Fprintf(w, " %s | %s |\n", mib(r.PeakRSSKB), num(start))
	}
	fmt.Fprintf(w, "\nCPU seconds per 1,000 calls (%s; the driver's in brackets) and the most other CPU %% in a phase\n\n", side(suite))
	fmt.Fprint(w, "| impl |")
	for _, c := range cells {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprint(w, " other CPU |\n|---|", strings.Repeat("---:|", len(cells)+1), "\n")
	for _, r := range t {
		fmt.Fprintf(w, "| %s |", r.Impl)
		other := 0.0
		for _, c := range cells {
			p := phase(r, c, "closed")
			if p == nil {
				fmt.Fprint(w, " - |")
				continue
			}
			own, driver := p.ServerCPUus, p.DriverCPUus
			if r.Role == "client" {
				own, driver = driver, own
			}
			fmt.Fprintf(w, " %.3f (%.3f) |", own/1000, driver/1000)
			other = max(other, p.OtherCPUPct)
		}
		fmt.Fprintf(w, " %.0f %% |\n", other)
	}
}

func side(suite string) string {
	if suite == "clients" {
		return "the client's"
	}
	return "the server's, with its children"
}

func cellText(p, top *harness.Phase) string {
	if p == nil || p.Verified == 0 {
		if p != nil && p.FirstError != "" {
			return "failed"
		}
		return "-"
	}
	pct := ""
	if top != nil && top.CallsPerS > 0 {
		pct = fmt.Sprintf(" · %.0f %%", 100*p.CallsPerS/top.CallsPerS)
	}
	return fmt.Sprintf("**%s**%s<br>%s / %s / %s", num(p.CallsPerS), pct, num(p.P50us), num(p.P99us), num(p.P999us))
}

// num writes a figure with thousands separators, no decimals above 100.
func num(v float64) string {
	if v == 0 {
		return "-"
	}
	if v < 100 {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func mib(kb int64) string {
	if kb == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(kb)/1024)
}

func openLoop(w io.Writer, rs results) {
	header := false
	for _, r := range rs {
		for _, p := range r.Phases {
			if p.Mode != "open" {
				continue
			}
			if !header {
				fmt.Fprint(w, "\n## Open loop (fixed rate; latency from the intended send time)\n\n")
				fmt.Fprint(w, "| suite | impl | era | transport | cell | rate/s | reached | p50 | p99 | p99.9 | max µs |\n")
				fmt.Fprint(w, "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|\n")
				header = true
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Suite, r.Impl, r.Era, r.Transport,
				cell{p.Conc, p.Payload}, num(p.TargetRate), num(p.CallsPerS), num(p.P50us), num(p.P99us), num(p.P999us), num(p.MaxUs))
		}
	}
}

// goals checks the standing goal: every cell of the goal implementation
// at two thirds of the ceiling or more.
func goals(w io.Writer, rs results, ceil ceilings, goal string) {
	var rows []string
	for _, suite := range []string{"servers", "clients"} {
		for _, era := range eras {
			for _, tr := range transports {
				t := rs.where(suite, era, tr)
				g, top := t.impl(goal), t.impl(ceil[suite])
				if g == nil || top == nil {
					continue
				}
				for _, c := range cells {
					p, q := phase(g, c, "closed"), phase(top, c, "closed")
					if p == nil || q == nil || q.CallsPerS == 0 {
						continue
					}
					pct := 100 * p.CallsPerS / q.CallsPerS
					mark := "yes"
					if pct < 200.0/3 {
						mark = "**no**"
					}
					rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s | %.0f %% | %s |", suite, era, tr, c, pct, mark))
				}
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Goal: every cell of %s at ⅔ of the ceiling or more\n\n", goal)
	fmt.Fprint(w, "| suite | era | transport | cell | of the ceiling | ≥ ⅔ |\n|---|---|---|---|---:|---|\n")
	fmt.Fprintln(w, strings.Join(rows, "\n"))
}

// machineLoad sums up how busy the rest of the machine was during the timed
// parts, so a disturbed run is visible as such.
func machineLoad(w io.Writer, rs results) {
	if load := loadText(rs); load != "" {
		fmt.Fprintf(w, "\n## Machine load\n\n%s\n", load)
	}
}

// loadText is the CPU other processes used during the timed phases, or ""
// if there were none.
func loadText(rs results) string {
	var other []float64
	for _, r := range rs {
		for _, p := range r.Phases {
			other = append(other, p.OtherCPUPct)
		}
	}
	if len(other) == 0 {
		return ""
	}
	slices.Sort(other)
	return fmt.Sprintf("CPU used by other processes during the %d timed phases (100 %% = one core): median %.0f %%, 90th percentile %.0f %%, max %.0f %%.",
		len(other), other[len(other)/2], other[len(other)*9/10], other[len(other)-1])
}

func problems(w io.Writer, rs results) {
	fmt.Fprintf(w, "\n## Problems\n\n%s\n", problemText(rs))
}

// problemText lists the fatal runs, the failed calls and the stray
// answers of rs, one per line.
func problemText(rs results) string {
	var lines []string
	for _, r := range rs {
		what := fmt.Sprintf("%s %s %s %s", r.Suite, r.Impl, r.Era, r.Transport)
		if r.Fatal != "" {
			lines = append(lines, fmt.Sprintf("- %s: **fatal**: %s", what, oneLine(r.Fatal)))
		}
		for _, p := range r.Phases {
			if p.Errors > 0 {
				lines = append(lines, fmt.Sprintf("- %s %s (%s): %d errors, %d mismatches; first: %s",
					what, cell{p.Conc, p.Payload}, p.Mode, p.Errors, p.Mismatches, oneLine(p.FirstError)))
			}
		}
		if r.Unmatched > 0 {
			lines = append(lines, fmt.Sprintf("- %s: %d answers nobody waited for", what, r.Unmatched))
		}
	}
	if len(lines) == 0 {
		return "None: every call of every phase was answered and its echo verified."
	}
	slices.Sort(lines)
	return strings.Join(slices.Compact(lines), "\n")
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}
