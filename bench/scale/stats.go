package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// sample is what the soak records every minute.
type sample struct {
	Replicas        []replicaSample `json:"replicas"`
	RedisUsedMemory int64           `json:"redis_used_memory"`
	Restarts        int             `json:"restarts"`
}

type replicaSample struct {
	Name  string `json:"name"`
	PID   int    `json:"pid"`
	RSSKB int64  `json:"rss_kb"` // 0: not running
}

func sampleCmd(args []string) error {
	fs := flag.NewFlagSet("scale sample", flag.ExitOnError)
	state := fs.String("state", "", "the state folder of scale up")
	sock := fs.String("redis-sock", "", "Redis's unix socket")
	fs.Parse(args)
	pids, err := filepath.Glob(filepath.Join(*state, "r*.pid"))
	if err != nil || len(pids) == 0 {
		return fmt.Errorf("no replica pid files in %q", *state)
	}
	var s sample
	for _, f := range pids {
		b, _ := os.ReadFile(f)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		s.Replicas = append(s.Replicas, replicaSample{strings.TrimSuffix(filepath.Base(f), ".pid"), pid, statusKB(pid, "VmRSS")})
	}
	b, _ := os.ReadFile(filepath.Join(*state, "restarts"))
	s.Restarts, _ = strconv.Atoi(string(b))
	info, err := redisInfo(*sock, "memory")
	if err != nil {
		return err
	}
	s.RedisUsedMemory, _ = strconv.ParseInt(info["used_memory"], 10, 64)
	return json.NewEncoder(os.Stdout).Encode(s)
}

// statusKB reads one kB field of /proc/PID/status; 0 if the process is gone.
func statusKB(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// redisInfo returns the fields of one section of Redis's INFO.
func redisInfo(sock, section string) (map[string]string, error) {
	out, err := exec.Command("redis-cli", "-s", sock, "INFO", section).Output()
	if err != nil {
		return nil, fmt.Errorf("redis-cli INFO %s: %w", section, err)
	}
	m := map[string]string{}
	for line := range strings.Lines(string(out)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

func commandStatsCmd(args []string) error {
	fs := flag.NewFlagSet("scale commandstats", flag.ExitOnError)
	sock := fs.String("redis-sock", "", "Redis's unix socket")
	fs.Parse(args)
	info, err := redisInfo(*sock, "commandstats")
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(info)) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		_, rest, _ := strings.Cut(info[k], "calls=")
		calls, _, _ := strings.Cut(rest, ",")
		fmt.Println(name, calls)
	}
	return nil
}

// perCallCmd prints the Redis commands per call of runs, each given as
// BEFORE AFTER RESULT: two commandstats and the run's loadgen result line
// (the last of RESULT). With two runs of different lengths it also prints
// the commands per call the longer run added: what a call costs once the
// session's fixed costs (its open, its copy on each replica, its end)
// are left out.
func perCallCmd(args []string) error {
	if len(args) == 0 || len(args)%3 != 0 {
		return errors.New("want BEFORE AFTER RESULT, once or twice")
	}
	var runs []counted
	for i := 0; i < len(args); i += 3 {
		c, err := countRun(args[i], args[i+1], args[i+2])
		if err != nil {
			return err
		}
		fmt.Println(perCallLine(c))
		runs = append(runs, c)
	}
	if len(runs) == 2 {
		fmt.Println(marginalLine(runs[0], runs[1]))
	}
	return nil
}

// counted is one run: the commands Redis ran during it, by name (INFO,
// the script's own, left out), and the calls it sent.
type counted struct {
	cmds  map[string]int
	calls int64
	what  string
}

func countRun(beforeF, afterF, result string) (counted, error) {
	before, err := readStats(beforeF)
	if err != nil {
		return counted{}, err
	}
	after, err := readStats(afterF)
	if err != nil {
		return counted{}, err
	}
	c := counted{cmds: map[string]int{}}
	if c.calls, c.what, err = runCalls(result); err != nil {
		return counted{}, err
	}
	if c.calls == 0 {
		return counted{}, fmt.Errorf("%s sent no call", c.what)
	}
	for name, n := range after {
		if d := n - before[name]; d > 0 && name != "info" {
			c.cmds[name] = d
		}
	}
	return c, nil
}

func (c counted) total() int {
	t := 0
	for _, n := range c.cmds {
		t += n
	}
	return t
}

// perCallLine says how many commands Redis ran during a run, and how many
// that is per call.
func perCallLine(c counted) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(c.cmds)) {
		parts = append(parts, fmt.Sprintf("%s %d", strings.ToUpper(name), c.cmds[name]))
	}
	line := fmt.Sprintf("- %s: %d Redis commands over %d tools/call (warm-up and timed, with the session's open and end): %.4f per call",
		c.what, c.total(), c.calls, float64(c.total())/float64(c.calls))
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

// marginalLine is what the longer of two runs added per call it added.
func marginalLine(a, b counted) string {
	if b.calls < a.calls {
		a, b = b, a
	}
	d := b.calls - a.calls
	if d == 0 {
		return "- the two runs sent as many calls: no marginal figure"
	}
	line := fmt.Sprintf("- **%.4f Redis commands per legacy tools/call** once the session is open: the longer run's %d commands less the shorter run's %d, over its %d more calls",
		float64(b.total()-a.total())/float64(d), b.total(), a.total(), d)
	var parts []string
	names := maps.Clone(b.cmds)
	maps.Copy(names, a.cmds)
	for _, name := range slices.Sorted(maps.Keys(names)) {
		if n := b.cmds[name] - a.cmds[name]; n != 0 {
			parts = append(parts, fmt.Sprintf("%s %+d", strings.ToUpper(name), n))
		}
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	return line
}

func readStats(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, n, _ := strings.Cut(sc.Text(), " ")
		m[name], _ = strconv.Atoi(n)
	}
	return m, sc.Err()
}

// runCalls sums the calls of the last result line of path.
func runCalls(path string) (int64, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var r struct {
		Impl, Era, Transport string
		Phases               []struct {
			Calls       int64 `json:"calls"`
			WarmupCalls int64 `json:"warmup_calls"`
		}
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return 0, "", err
	}
	var n int64
	for _, p := range r.Phases {
		n += p.Calls + p.WarmupCalls
	}
	return n, fmt.Sprintf("%s, %s era, %s", r.Impl, r.Era, r.Transport), nil
}
