package stdio

import (
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"
)

// reopen returns a pollable descriptor of its own for f when f is a pipe
// or a terminal that Go cannot interrupt (os.Stdin is opened in blocking
// mode), or nil. Opening /proc/self/fd/N creates a new open file
// description, so making it non-blocking leaves f, and whoever shares it
// (a parent shell's terminal), untouched.
func reopen(f *os.File) *os.File {
	st, err := f.Stat()
	if err != nil || st.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) == 0 {
		return nil
	}
	rc, err := f.SyscallConn() // not f.Fd(), which would change f's mode
	if err != nil {
		return nil
	}
	fd := -1
	rc.Control(func(d uintptr) { fd = int(d) })
	if fd < 0 {
		return nil
	}
	g, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(fd),
		os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	if g.SetReadDeadline(time.Time{}) != nil {
		g.Close()
		return nil
	}
	return g
}
