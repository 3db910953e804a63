package stdio

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxIovecs is IOV_MAX on Linux: the most pieces one writev(2) takes.
const maxIovecs = 1024

// writeVectored writes the pieces in order: with writev(2) when w is an
// *os.File, so that a line and the long strings it refers to leave in one
// system call, else with a Write each.
func writeVectored(w io.Writer, pieces [][]byte) error {
	if sw, ok := w.(*socketWriter); ok {
		_, err := sw.writev(pieces, true)
		return err
	}
	f, ok := w.(*os.File)
	if !ok {
		return writeEach(w, pieces)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return writeEach(w, pieces)
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for pieces = skipWritten(pieces, 0); len(pieces) > 0; {
			n, err := unix.Writev(int(fd), pieces[:min(len(pieces), maxIovecs)])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false // wait until the pipe has room
			case err != nil:
				werr = &os.PathError{Op: "writev", Path: f.Name(), Err: err}
				return true
			case n == 0:
				werr = io.ErrShortWrite
				return true
			}
			pieces = skipWritten(pieces, n)
		}
		return true
	})
	if err != nil {
		return err
	}
	return werr
}

// tryWriteVectored is writeVectored that does not wait: when the pipe is
// full it returns the pieces left and errWouldBlock.
func tryWriteVectored(w io.Writer, pieces [][]byte) ([][]byte, error) {
	if sw, ok := w.(*socketWriter); ok {
		return sw.writev(pieces, false)
	}
	f, ok := w.(*os.File)
	if !ok {
		return nil, writeEach(w, pieces)
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, writeEach(w, pieces)
	}
	var werr error
	err = rc.Write(func(fd uintptr) bool {
		for pieces = skipWritten(pieces, 0); len(pieces) > 0; {
			n, err := unix.Writev(int(fd), pieces[:min(len(pieces), maxIovecs)])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				werr = errWouldBlock
				return true
			case err != nil:
				werr = &os.PathError{Op: "writev", Path: f.Name(), Err: err}
				return true
			case n == 0:
				werr = io.ErrShortWrite
				return true
			}
			pieces = skipWritten(pieces, n)
		}
		return true
	})
	if err != nil {
		return pieces, err
	}
	return pieces, werr
}

// skipWritten drops the first n bytes of pieces, and the empty pieces
// that follow them.
func skipWritten(pieces [][]byte, n int) [][]byte {
	for len(pieces) > 0 && n >= len(pieces[0]) {
		n -= len(pieces[0])
		pieces = pieces[1:]
	}
	if n > 0 {
		pieces[0] = pieces[0][n:]
	}
	return pieces
}
