package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// scaleSample is what scale sample writes (bench/scale): each replica's
// resident memory, Redis's memory, the restarts so far.
type scaleSample struct {
	Replicas []struct {
		Name  string `json:"name"`
		RSSKB int64  `json:"rss_kb"`
	} `json:"replicas"`
	RedisUsedMemory int64 `json:"redis_used_memory"`
	Restarts        int   `json:"restarts"`
}

func soakReportCmd(args []string) error {
	fs := flag.NewFlagSet("loadgen soak-report", flag.ExitOnError)
	title := fs.String("title", "Soak", "title of the report")
	warm := fs.Int("warmup", 1, "windows left out of the flatness check")
	fs.Parse(args)
	if fs.NArg() != 1 {
		return fmt.Errorf("want one soak file")
	}
	lines, err := loadSoak(fs.Arg(0))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(os.Stdout)
	soakReport(w, *title, lines, *warm)
	return w.Flush()
}

func loadSoak(path string) ([]soakLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []soakLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var l soakLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

func soakReport(w io.Writer, title string, lines []soakLine, warm int) {
	var windows []soakLine
	var total *soakLine
	for i := range lines {
		if lines[i].Kind == "total" {
			total = &lines[i]
		} else {
			windows = append(windows, lines[i])
		}
	}
	fmt.Fprintf(w, "# %s\n\n", title)
	if total == nil {
		fmt.Fprintln(w, "**The soak did not finish: no total line.**")
	} else {
		soakVerdicts(w, *total)
	}
	samples := make([]scaleSample, len(windows))
	var names []string
	for i, l := range windows {
		json.Unmarshal(l.Sample, &samples[i])
		for _, r := range samples[i].Replicas {
			if !slices.Contains(names, r.Name) {
				names = append(names, r.Name)
			}
		}
	}
	flatness(w, windows, samples, names, warm)
	fmt.Fprint(w, "\n## Each window\n\n| minute | calls | answered | failed | timed out | sessions lost | p50 ms | p99 ms | max ms | restarts |")
	for _, n := range names {
		fmt.Fprintf(w, " %s RSS |", n)
	}
	fmt.Fprint(w, " Redis used_memory |\n|", strings.Repeat("---:|", 10+len(names)+1), "\n")
	for i, l := range windows {
		fmt.Fprintf(w, "| %.1f | %d | %d | %d | %d | %d | %.2f | %.2f | %.1f | %d |", l.Minute, l.Calls, l.OK, failedCount(l),
			l.Timeouts, l.Lost, l.P50us/1000, l.P99us/1000, l.MaxUs/1000, samples[i].Restarts)
		for _, n := range names {
			fmt.Fprintf(w, " %s |", mib(rssOf(samples[i], n)))
		}
		fmt.Fprintf(w, " %.1f MiB |\n", float64(samples[i].RedisUsedMemory)/(1<<20))
		if l.SampleErr != "" {
			fmt.Fprintf(w, "| | sample failed: %s |\n", l.SampleErr)
		}
	}
}

func failedCount(l soakLine) int64 {
	var n int64
	for _, v := range l.Failed {
		n += v
	}
	return n
}

func rssOf(s scaleSample, name string) int64 {
	for _, r := range s.Replicas {
		if r.Name == name {
			return r.RSSKB
		}
	}
	return 0
}

// soakVerdicts states what the soak is for: every call answered or failed
// with an error (none hung), and no legacy session lost.
func soakVerdicts(w io.Writer, t soakLine) {
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "**no**"
	}
	fmt.Fprintf(w, "%d clients (%s, taken in turn) for %.1f minutes: %d calls, %d answered and verified, %d failed with an error, p50 %.2f ms, p99 %.2f ms, max %.1f ms.\n\n",
		t.Clients, strings.Join(t.Eras, " and "), t.Minute, t.Calls, t.OK, failedCount(t), t.P50us/1000, t.P99us/1000, t.MaxUs/1000)
	fmt.Fprintf(w, "- Every call answered or failed with an error, none hung: %s (%d calls reached their deadline and count as failed; %d clients were still in a call after it)\n",
		yes(t.Hung == 0), t.Timeouts, t.Hung)
	fmt.Fprintf(w, "- No legacy session lost (none answered 404, none needed a new initialize): %s (%d)\n", yes(t.Lost == 0), t.Lost)
	for _, k := range slices.Sorted(maps.Keys(t.Failed)) {
		fmt.Fprintf(w, "- failed, %s: %d; first: %s\n", k, t.Failed[k], t.FirstErr[k])
	}
}

// flatness compares, after the warm-up windows, the largest value of the
// second half of the run with that of the first half (the last window,
// cut short while the clients end their sessions, left out): memory that grows
// with time shows as a second half above the first.
func flatness(w io.Writer, windows []soakLine, samples []scaleSample, names []string, warm int) {
	if len(windows)-warm < 3 {
		fmt.Fprintf(w, "- Memory flat after warm-up: not judged (fewer than 2 full windows after the %d of warm-up)\n", warm)
		return
	}
	s := samples[warm:]
	if windows[len(windows)-1].Kind == "last" {
		s = s[:len(s)-1]
	}
	half := len(s) / 2
	peak := func(part []scaleSample, get func(scaleSample) int64) int64 {
		var m int64
		for _, x := range part {
			m = max(m, get(x))
		}
		return m
	}
	series := map[string]func(scaleSample) int64{"Redis used_memory": func(x scaleSample) int64 { return x.RedisUsedMemory / 1024 }}
	order := []string{}
	for _, n := range names {
		key := n + " RSS"
		series[key] = func(x scaleSample) int64 { return rssOf(x, n) }
		order = append(order, key)
	}
	order = append(order, "Redis used_memory")
	for _, k := range order {
		a, b := peak(s[:half], series[k]), peak(s[half:], series[k])
		flat := b <= a+a/4
		verdict := "flat"
		if !flat {
			verdict = "**grew**"
		}
		fmt.Fprintf(w, "- %s after the %d warm-up window(s): largest %s in the first half, %s in the second: %s (flat: within 25 %%)\n",
			k, warm, mib(a), mib(b), verdict)
	}
}
