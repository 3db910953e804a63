package stdio

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// strays finds the processes of a server that left its process group
// (setsid(2), as a process that means to outlive its parent does), which
// the signals sent to the group miss: those that descend from the server
// and those that hold one of its pipes. A process is known by its pid
// and its start time, so that a pid reused meanwhile is not signalled.
type strays struct {
	server int
	// since is the server's start time (0 if unknown): a process that
	// started before it can neither descend from it nor have inherited
	// its pipes, so scan looks no further at it. That spares reading
	// the fds of every process of the machine: with 90 processes
	// running, that reading cost a "ferry tools" 10 ms of CPU (of 23)
	// and 0.9 MB of its peak memory.
	since uint64
	pipes map[uint64]bool // inodes of the server's stdin, stdout, stderr
	found map[int]uint64  // pid: start time
}

func newStrays(pid int, files ...*os.File) *strays {
	st := &strays{server: pid, pipes: map[uint64]bool{}, found: map[int]uint64{}}
	if s, ok := readStat(pid); ok {
		st.since = s.start
	}
	for _, f := range files {
		if fi, err := f.Stat(); err == nil {
			if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
				st.pipes[sys.Ino] = true
			}
		}
	}
	return st
}

// procStat is what strays reads of /proc/PID/stat.
type procStat struct {
	ppid, pgrp int
	start      uint64
	zombie     bool
}

func readStat(pid int) (procStat, bool) {
	// Read into a buffer of the stack, not with os.ReadFile: scan reads
	// the stat of every process of the machine, twice per server.
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	// The line is some 300 bytes, whatever the comm (16 bytes at most).
	var buf [1024]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	// "pid (comm) state ppid pgrp ... starttime(22)", comm may hold anything.
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, false
	}
	// f are the fields after comm: state(3) to starttime(22).
	var f [20][]byte
	rest := b[i+1:]
	for k := range f {
		rest = bytes.TrimLeft(rest, " ")
		end := bytes.IndexByte(rest, ' ')
		if end < 0 {
			end = len(rest)
		}
		if end == 0 {
			return procStat{}, false
		}
		f[k], rest = rest[:end], rest[end:]
	}
	ppid, _ := strconv.Atoi(string(f[1]))
	pgrp, _ := strconv.Atoi(string(f[2]))
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return procStat{ppid: ppid, pgrp: pgrp, start: start, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// scan adds the processes that descend from the server or hold one of
// its pipes.
func (st *strays) scan() {
	d, err := os.Open("/proc")
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	stats := map[int]procStat{}
	self := os.Getpid()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		s, ok := readStat(pid)
		// A child of ours other than the server is no stray of it: it is
		// another server, or one being started. Between fork and exec it
		// holds a copy of every descriptor of ours, the server's pipes
		// among them, and a signal then would kill it before its exec,
		// which Start takes for success ("exited (signal: terminated)").
		if ok && !s.zombie && s.start >= st.since && (s.ppid != self || pid == st.server) {
			stats[pid] = s
		}
	}
	descends := func(pid int) bool {
		for i := 0; i < 64 && pid > 1; i++ {
			if pid == st.server {
				return true
			}
			pid = stats[pid].ppid
		}
		return false
	}
	for pid, s := range stats {
		if pid != st.server && (descends(pid) || st.holdsPipe(pid)) {
			st.found[pid] = s.start
		}
	}
}

func (st *strays) holdsPipe(pid int) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	d, err := os.Open(dir)
	if err != nil {
		return false
	}
	fds, _ := d.Readdirnames(-1)
	d.Close()
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd)
		if err != nil {
			continue
		}
		if ino, ok := strings.CutPrefix(link, "pipe:["); ok {
			if n, err := strconv.ParseUint(strings.TrimSuffix(ino, "]"), 10, 64); err == nil && st.pipes[n] {
				return true
			}
		}
	}
	return false
}

// alive returns the processes found that still run.
func (st *strays) alive() []int {
	var pids []int
	for pid, start := range st.found {
		if s, ok := readStat(pid); ok && !s.zombie && s.start == start {
			pids = append(pids, pid)
		} else {
			delete(st.found, pid)
		}
	}
	return pids
}

// stop sends the processes found SIGTERM, and SIGKILL to those still
// running after grace.
func (st *strays) stop(grace time.Duration) {
	pids := st.alive()
	if len(pids) == 0 {
		return
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for d := time.Millisecond; len(st.alive()) > 0 && time.Now().Before(deadline); d = min(2*d, 20*time.Millisecond) {
		time.Sleep(d)
	}
	for _, pid := range st.alive() {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
