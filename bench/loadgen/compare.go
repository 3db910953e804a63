package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// compareCmd renders two runs of the same cells, an old and a new build
// (scripts/bench-compare.sh), as one table: each cell's calls/s, p99
// and CPU per call at both, and new/old.
func compareCmd(args []string) error {
	fs := flag.NewFlagSet("loadgen compare", flag.ExitOnError)
	title := fs.String("title", "ferry: two builds, same cells", "title of the report")
	labels := fs.String("labels", "old,new", "the names of the two runs, OLD,NEW")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: loadgen compare [-title T] [-labels OLD,NEW] OLD.jsonl NEW.jsonl")
		fs.PrintDefaults()
	}
	fs.Parse(args)
	oldName, newName, ok := strings.Cut(*labels, ",")
	if fs.NArg() != 2 || !ok {
		fs.Usage()
		return fmt.Errorf("compare needs two result files and -labels OLD,NEW")
	}
	oldRs, err := load(fs.Args()[:1])
	if err != nil {
		return err
	}
	newRs, err := load(fs.Args()[1:])
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "# %s\n", *title)
	compare(w, build{oldName, oldRs}, build{newName, newRs})
	return w.Flush()
}

// build is one of the two runs compared.
type build struct {
	name string
	rs   results
}

// pairRow is one cell measured at both sides; either phase may be nil.
type pairRow struct {
	suite, impl, era, transport string
	cell                        cell
	old, new                    *harness.Phase
	client                      bool
}

func compare(w io.Writer, old, new build) {
	rows := pairRows(old.rs, new.rs)
	fmt.Fprintf(w, "\nEach cell at %s and at %s, closed loop; × is %s / %s: above 1 is better for calls/s, below 1 is better for p99 and CPU. CPU per call is the side under test's (the server's with its children; the client's for clients). Other CPU is the most CPU other processes used in the phase (100 %% = one core), %s / %s: a busy machine blurs the ratio.\n\n",
		old.name, new.name, new.name, old.name, old.name, new.name)
	fmt.Fprintf(w, "| suite | impl | era | transport | cell | calls/s %[1]s | calls/s %[2]s | × | p99 µs %[1]s | p99 µs %[2]s | × | CPU µs/call %[1]s | CPU µs/call %[2]s | × | other CPU |\n", old.name, new.name)
	fmt.Fprint(w, "|---|---|---|---|---|", strings.Repeat("---:|", 10), "\n")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.suite, r.impl, r.era, r.transport, r.cell,
			strings.Join(r.figures(), " | "), otherCPU(r.old, r.new))
	}
	summary(w, rows, new.name, old.name)
	for _, s := range []build{old, new} {
		fmt.Fprintf(w, "\n## Problems at %s\n\n%s\n", s.name, problemText(s.rs))
		if load := loadText(s.rs); load != "" {
			fmt.Fprintf(w, "\nMachine load at %s: %s\n", s.name, load)
		}
	}
}

// pairRows matches the cells of the two runs, in the report's order.
func pairRows(old, new results) []pairRow {
	var rows []pairRow
	for _, suite := range suites {
		for _, era := range eras {
			for _, tr := range transports {
				o, n := old.where(suite, era, tr), new.where(suite, era, tr)
				for _, impl := range implNames(o, n) {
					ro, rn := o.impl(impl), n.impl(impl)
					for _, c := range cells {
						po, pn := phase(ro, c, "closed"), phase(rn, c, "closed")
						if po == nil && pn == nil {
							continue
						}
						rows = append(rows, pairRow{suite, impl, era, tr, c, po, pn, isClient(ro, rn)})
					}
				}
			}
		}
	}
	return rows
}

// implNames lists the implementations of both runs, old's order first.
func implNames(old, new results) []string {
	var names []string
	seen := map[string]bool{}
	for _, r := range append(old[:len(old):len(old)], new...) {
		if !seen[r.Impl] {
			seen[r.Impl] = true
			names = append(names, r.Impl)
		}
	}
	return names
}

func isClient(rs ...*harness.Result) bool {
	for _, r := range rs {
		if r != nil {
			return r.Role == "client"
		}
	}
	return false
}

// figures are the row's calls/s, p99 and CPU per call columns, each as
// old, new and new/old.
func (r pairRow) figures() []string {
	var out []string
	for _, f := range []func(*harness.Phase) float64{rate, p99, r.cpuPerCall} {
		o, n := measured(r.old, f), measured(r.new, f)
		out = append(out, figure(r.old, o), figure(r.new, n), ratioText(o, n))
	}
	return out
}

func rate(p *harness.Phase) float64 { return p.CallsPerS }
func p99(p *harness.Phase) float64  { return p.P99us }

// cpuPerCall is the CPU of the side under test per call, in µs.
func (r pairRow) cpuPerCall(p *harness.Phase) float64 {
	if r.client {
		return p.DriverCPUus
	}
	return p.ServerCPUus
}

// measured is f of a phase whose calls were verified, else 0.
func measured(p *harness.Phase, f func(*harness.Phase) float64) float64 {
	if p == nil || p.Verified == 0 {
		return 0
	}
	return f(p)
}

func figure(p *harness.Phase, v float64) string {
	switch {
	case p != nil && p.Verified == 0 && p.FirstError != "":
		return "failed"
	case v == 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.3f", v)
	}
	return num(v)
}

func ratioText(old, new float64) string {
	if old == 0 || new == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", new/old)
}

func otherCPU(old, new *harness.Phase) string {
	pct := func(p *harness.Phase) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f %%", p.OtherCPUPct)
	}
	return pct(old) + " / " + pct(new)
}

// summary is the geometric mean of each ratio over the cells of each
// suite and implementation measured at both sides.
func summary(w io.Writer, rows []pairRow, newName, oldName string) {
	type key struct{ suite, impl string }
	var order []key
	logs := map[key]*[3]float64{}
	count := map[key]int{}
	for _, r := range rows {
		k := key{r.suite, r.impl}
		vals, ok := r.ratios()
		if !ok {
			continue
		}
		if logs[k] == nil {
			logs[k] = &[3]float64{}
			order = append(order, k)
		}
		for i, v := range vals {
			logs[k][i] += math.Log(v)
		}
		count[k]++
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Geometric mean of %s / %s over the cells measured at both\n\n", newName, oldName)
	fmt.Fprint(w, "| suite | impl | cells | calls/s × | p99 × | CPU/call × |\n|---|---|---:|---:|---:|---:|\n")
	for _, k := range order {
		n := float64(count[k])
		l := logs[k]
		fmt.Fprintf(w, "| %s | %s | %d | %.2f | %.2f | %.2f |\n", k.suite, k.impl, count[k], math.Exp(l[0]/n), math.Exp(l[1]/n), math.Exp(l[2]/n))
	}
}

// ratios are new/old of calls/s, p99 and CPU per call, if the cell has
// all three at both sides.
func (r pairRow) ratios() ([3]float64, bool) {
	var out [3]float64
	for i, f := range []func(*harness.Phase) float64{rate, p99, r.cpuPerCall} {
		o, n := measured(r.old, f), measured(r.new, f)
		if o == 0 || n == 0 {
			return out, false
		}
		out[i] = n / o
	}
	return out, true
}
