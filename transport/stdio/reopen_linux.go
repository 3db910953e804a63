package stdio

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// reopen returns a reader of a descriptor of its own for f, and the
// function that makes a blocked read of it return, when f is a pipe, a
// stream socket or a terminal that Go cannot interrupt (os.Stdin is
// opened in blocking mode); otherwise nil. A pipe or a terminal is
// opened again through /proc/self/fd/N: that creates a new open file
// description, so making it non-blocking leaves f, and whoever shares it
// (a parent shell's terminal), untouched. A socket cannot be opened so,
// and need not be: it is duplicated, and read with MSG_DONTWAIT, which
// does not wait whatever the mode it shares with f. A child that Node
// starts (the TypeScript SDK's clients, the Inspector) has sockets for
// its standard streams: libuv makes a socket pair where asked for a pipe.
func reopen(f *os.File) (io.Reader, func() error) {
	st, err := f.Stat()
	if err != nil || st.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice|fs.ModeSocket) == 0 {
		return nil, nil
	}
	fd := fdOf(f)
	if fd < 0 {
		return nil, nil
	}
	sock := st.Mode()&fs.ModeSocket != 0
	var own int
	if sock {
		own, err = dupStreamSocket(fd)
	} else {
		own, err = unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(own)
		return nil, nil
	}
	p := &pollReader{pollFDs: newPollFDs(f.Name(), own, wake, unix.POLLIN), sock: sock}
	return p, p.interrupt
}

// reopenForWriting returns a non-blocking file of its own for w, and the
// function that closes it, when w is an *os.File over a pipe, a terminal
// or a stream socket in blocking mode, as os.Stdout is; otherwise w and
// nil. Go's
// poller waits for room in the file of its own, so that a writer that
// finds the pipe full leaves the rest to the line writer's detached
// flusher (see drain) and returns, rather than wait in write(2) for a
// client that stopped reading, beyond its context. Like reopen's, the
// new open file description leaves w's mode alone. A stream socket,
// which cannot be opened so, is written through a socketWriter instead:
// making it non-blocking would make it so for whoever shares it (the
// children a server starts).
func reopenForWriting(w io.Writer) (io.Writer, func() error) {
	f, ok := w.(*os.File)
	if !ok || f.SetWriteDeadline(time.Time{}) == nil { // not a file, or one Go's poller waits for
		return w, nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice|fs.ModeSocket) == 0 {
		return w, nil
	}
	fd := fdOf(f)
	if fd < 0 {
		return w, nil
	}
	if st.Mode()&fs.ModeSocket != 0 {
		if sw := newSocketWriter(f, fd); sw != nil {
			return sw, sw.interrupt
		}
		return w, nil
	}
	own, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return w, nil
	}
	g := os.NewFile(uintptr(own), f.Name())
	return g, g.Close
}

// fdOf is f's descriptor, or -1.
func fdOf(f *os.File) int {
	rc, err := f.SyscallConn() // not f.Fd(), which would change f's mode
	if err != nil {
		return -1
	}
	fd := -1
	rc.Control(func(d uintptr) { fd = int(d) })
	return fd
}

// dupStreamSocket returns a duplicate of fd when it is a stream socket.
// A datagram socket is left alone: a read into a buffer shorter than a
// datagram would lose the rest of it.
func dupStreamSocket(fd int) (int, error) {
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return -1, err
	}
	if typ != unix.SOCK_STREAM {
		return -1, unix.ENOTSUP
	}
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// pollReader reads a descriptor without waiting (a non-blocking one, or
// a socket with MSG_DONTWAIT) and, when it has nothing to read, waits in
// poll(2) for it or for an eventfd that interrupt signals.
//
// Waiting in a system call of its own, rather than in Go's network
// poller, makes a wait for the next request cost what a blocking read
// costs: the thread sleeps in the kernel until data comes, where the
// poller parks the goroutine, has the scheduler look for other work,
// and wakes it through epoll. With a client that waits for each answer
// (every request then finds the pipe empty), the server spent a quarter
// to a third less CPU per call.
//
// A read that returned a single line, and less than it was asked for,
// emptied the pipe of a client that sends a request at a time, and the
// next read usually finds it still empty: the client waits for the
// answer. That one waits in poll first, rather than learn from a read
// returning EAGAIN what the short read already said: two system calls
// per request instead of three (when the request did come meanwhile,
// poll returns at once). A client with several requests in flight sends
// several lines at a time, and more come while they are handled: there
// the read comes first.
type pollReader struct {
	pollFDs
	// sock: the descriptor is a socket that may be in blocking mode,
	// read with MSG_DONTWAIT.
	sock bool
	// lull: the last read returned one line and less than asked, so
	// the next read likely finds nothing. Only Read touches it.
	lull bool
}

// pollFDs is a descriptor used without waiting and the eventfd that
// interrupt signals, as poll(2) wants them, and their closing: the
// descriptors are closed by interrupt, or by the use in progress when it
// ends (see enter).
type pollFDs struct {
	name string
	fds  [2]unix.PollFd // only the one user at a time polls

	mu     sync.Mutex
	busy   bool // a use is in progress: it closes the descriptors
	closed bool
}

func newPollFDs(name string, fd, wake int, events int16) pollFDs {
	return pollFDs{name: name, fds: [2]unix.PollFd{{Fd: int32(fd), Events: events}, {Fd: int32(wake), Events: unix.POLLIN}}}
}

// enter starts a use of the descriptor, unless interrupt came first.
func (p *pollFDs) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = !p.closed
	return p.busy
}

// leave ends a use, and reports whether interrupt came meanwhile (the
// descriptors are then closed).
func (p *pollFDs) leave() (closed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	if p.closed {
		p.release()
	}
	return p.closed
}

func (p *pollReader) Read(b []byte) (int, error) {
	if !p.enter() {
		return 0, jsonrpc.ErrClosed
	}
	n, err := p.read(b)
	if p.leave() {
		n, err = 0, jsonrpc.ErrClosed
	}
	return n, err
}

func (p *pollReader) read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if p.lull {
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
	for {
		n, err := p.readNow(b)
		switch {
		case err == nil && n > 0:
			p.lull = n < len(b) && bytes.IndexByte(b[:n], '\n') == n-1
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == unix.EINTR:
			continue
		case err != unix.EAGAIN:
			return 0, &os.PathError{Op: "read", Path: p.name, Err: err}
		}
		if err := p.wait(); err != nil {
			return 0, err
		}
	}
}

// readNow reads what the descriptor holds, or fails with EAGAIN.
func (p *pollReader) readNow(b []byte) (int, error) {
	fd := int(p.fds[0].Fd)
	if !p.sock {
		return unix.Read(fd, b)
	}
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// wait sleeps in poll(2) until the descriptor is ready (input or its
// end to read, room to write) or interrupt signals; then
// jsonrpc.ErrClosed.
func (p *pollFDs) wait() error {
	// The thread keeps its P while it sleeps in poll. With more than
	// one P, what the caller made runnable (a handler woken by an
	// answer it read) is taken by another; with one, let it run first
	// rather than wait for the runtime to take the P back.
	if runtime.GOMAXPROCS(0) == 1 {
		runtime.Gosched()
	}
	for {
		_, err := unix.Poll(p.fds[:], -1)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return &os.PathError{Op: "poll", Path: p.name, Err: err}
		}
	}
	if p.fds[1].Revents != 0 {
		return jsonrpc.ErrClosed
	}
	return nil
}

// interrupt makes a blocked use, and every later one, return jsonrpc.ErrClosed.
func (p *pollFDs) interrupt() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	if p.busy {
		var one = [8]byte{1}
		_, err := unix.Write(int(p.fds[1].Fd), one[:])
		return err
	}
	p.release()
	return nil
}

// release closes the descriptors, once nothing can use them.
func (p *pollFDs) release() {
	for i := range p.fds {
		unix.Close(int(p.fds[i].Fd))
		p.fds[i].Fd = -1
	}
}
