package stdio

import (
	"io"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// socketWriter writes to a duplicate of a stream socket with
// sendmsg(MSG_DONTWAIT), which does not wait whatever the mode of the
// open file description it shares with the socket it was made from (a
// launched server's os.Stdout, in blocking mode when Node made it): a
// write that finds the socket full returns, or, when it may wait, waits
// in poll(2), which interrupt ends. Only one write is in progress at a
// time: lineWriter has one flusher.
type socketWriter struct {
	pollFDs
	iov []unix.Iovec // the write's pieces, as sendmsg wants them
}

// newSocketWriter returns a socketWriter for f, or nil when f is not a
// stream socket.
func newSocketWriter(f *os.File, fd int) *socketWriter {
	own, err := dupStreamSocket(fd)
	if err != nil {
		return nil
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(own)
		return nil
	}
	return &socketWriter{pollFDs: newPollFDs(f.Name(), own, wake, unix.POLLOUT)}
}

// Write is writev of one piece; lineWriter's writes go through writev.
func (s *socketWriter) Write(b []byte) (int, error) {
	rest, err := s.writev([][]byte{b}, true)
	return len(b) - piecesLen(rest), err
}

// writev writes the pieces in order. When the socket is full it waits
// for room if wait is set, else returns the pieces left and
// errWouldBlock.
func (s *socketWriter) writev(pieces [][]byte, wait bool) ([][]byte, error) {
	if !s.enter() {
		return pieces, jsonrpc.ErrClosed
	}
	rest, err := s.send(pieces, wait)
	if s.leave() && err != nil && err != errWouldBlock {
		err = jsonrpc.ErrClosed
	}
	return rest, err
}

func (s *socketWriter) send(pieces [][]byte, wait bool) ([][]byte, error) {
	for pieces = skipWritten(pieces, 0); len(pieces) > 0; {
		n, err := s.sendNow(pieces)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN && !wait:
			return pieces, errWouldBlock
		case err == unix.EAGAIN:
			if err := s.wait(); err != nil {
				return pieces, err
			}
			continue
		case err != nil:
			return pieces, &os.PathError{Op: "sendmsg", Path: s.name, Err: err}
		case n == 0:
			return pieces, io.ErrShortWrite
		}
		pieces = skipWritten(pieces, n)
	}
	return nil, nil
}

// sendNow sends what the socket takes of the pieces at once. The pieces
// are not empty, but for the one after the last written (skipWritten).
func (s *socketWriter) sendNow(pieces [][]byte) (int, error) {
	for _, p := range pieces[:min(len(pieces), maxIovecs)] {
		if len(p) > 0 {
			v := unix.Iovec{Base: &p[0]}
			v.SetLen(len(p))
			s.iov = append(s.iov, v)
		}
	}
	msg := unix.Msghdr{Iov: &s.iov[0]}
	msg.SetIovlen(len(s.iov))
	n, _, errno := unix.Syscall(unix.SYS_SENDMSG, uintptr(s.fds[0].Fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
	clear(s.iov) // keeps no string alive
	s.iov = s.iov[:0]
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func piecesLen(pieces [][]byte) int {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	return n
}
