package harness

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// clockTick is the kernel's USER_HZ, the unit of /proc CPU times: 100 on
// every Linux this runs on (it is fixed by the kernel's ABI).
const clockTick = 100

// procCPU returns the CPU time (user + system) of a process in
// microseconds, from /proc/PID/stat (10 ms resolution); 0 if it is gone.
func procCPU(pid int) int64 {
	f := statFields(pid)
	if len(f) < 15 {
		return 0
	}
	u, _ := strconv.ParseInt(f[13], 10, 64)
	s, _ := strconv.ParseInt(f[14], 10, 64)
	return (u + s) * 1_000_000 / clockTick
}

// statFields splits /proc/PID/stat after the command name (which may hold
// spaces), so that field n of proc(5) is at index n-1.
func statFields(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return append([]string{"pid", "comm"}, strings.Fields(string(b[i+1:]))...)
}

// selfCPU is this process's CPU time in microseconds, at µs resolution.
func selfCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano()/1000 + ru.Stime.Nano()/1000
}

// Tree returns pid and all its descendants: a gateway's children are
// part of the cost of the gateway.
func Tree(pid int) []int {
	if pid <= 0 {
		return nil
	}
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := statFields(p); len(f) > 3 {
			ppid, _ := strconv.Atoi(f[3])
			children[ppid] = append(children[ppid], p)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}

// Children returns the direct children of pid.
func Children(pid int) []int {
	t := Tree(pid)
	var out []int
	for _, p := range t[min(1, len(t)):] {
		if f := statFields(p); len(f) > 3 && f[3] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out
}

func treeCPU(pids []int) int64 {
	var sum int64
	for _, p := range pids {
		sum += procCPU(p)
	}
	return sum
}

// PeakRSS sums the peak resident memory (VmHWM, kB) of the processes.
func PeakRSS(pids []int) int64 {
	var sum int64
	for _, p := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				sum += kb
			}
		}
	}
	return sum
}

// MachineBusy is the CPU time all processes of the machine used, in
// microseconds (every field of the cpu line of /proc/stat but idle and
// iowait).
func MachineBusy() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is in user already
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		busy += n
	}
	return busy * 1_000_000 / clockTick
}
