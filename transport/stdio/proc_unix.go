//go:build unix

package stdio

import (
	"os"
	"syscall"
)

// The server leads its own process group (see setSysProcAttr), so
// signalling -pid reaches whatever it started too.

func terminateGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGTERM) }

func killGroup(p *os.Process) { syscall.Kill(-p.Pid, syscall.SIGKILL) }

// groupSignalable reports whether the server's group has any process,
// zombies included.
func groupSignalable(p *os.Process) bool {
	err := syscall.Kill(-p.Pid, 0)
	return err == nil || err == syscall.EPERM
}
