package stdio

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// setSysProcAttr puts the server in a process group of its own and has
// the kernel kill it if this process dies first. (Pdeathsig follows the
// thread that started the child: do not call Connect from a goroutine
// that locked its thread and exits without unlocking it.)
func setSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// groupAlive reports whether a process of the server's group still runs.
// Zombies do not count: the server's orphans are reaped by init, which
// in a container may take its time or never do it.
func groupAlive(p *os.Process) bool {
	if !groupSignalable(p) {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		stat, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp ...", where comm may hold anything.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(stat[i+1:])
		if len(f) < 3 || string(f[2]) != strconv.Itoa(p.Pid) {
			continue
		}
		if f[0][0] != 'Z' && f[0][0] != 'X' {
			return true
		}
	}
	return false
}
