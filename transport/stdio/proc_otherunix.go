//go:build unix && !linux

package stdio

import (
	"os"
	"os/exec"
	"syscall"
)

// setSysProcAttr puts the server in a process group of its own.
func setSysProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether any process is left in the server's group.
func groupAlive(p *os.Process) bool { return groupSignalable(p) }
