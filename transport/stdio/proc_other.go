//go:build !unix

package stdio

import (
	"os"
	"os/exec"
)

// Without process groups, only the server itself can be stopped.

func setSysProcAttr(cmd *exec.Cmd) {}

func terminateGroup(p *os.Process) { p.Kill() }

func killGroup(p *os.Process) { p.Kill() }

func groupAlive(p *os.Process) bool { return false }
