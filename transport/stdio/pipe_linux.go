package stdio

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// pipeSize is what the pipes of a stdio connection are grown to: Linux's
// default of 64 KiB is less than one large message and its newline, so
// such a message would cross in pieces, each a write, a wakeup and a read
// on either side. 1 MiB is the default pipe-max-size, allowed to any user.
const pipeSize = 1 << 20

// growPipe enlarges the kernel buffer of the pipe behind v, if v is an
// *os.File over a pipe. It is only an optimisation: when the system
// refuses (a user over its pipe-user-pages limit), the pipe keeps its
// size.
func growPipe(v any) {
	f, ok := v.(*os.File)
	if !ok {
		return
	}
	if st, err := f.Stat(); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn() // not f.Fd(), which would make f blocking
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		if size, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && size < pipeSize {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		}
	})
}
