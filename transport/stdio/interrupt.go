package stdio

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// stdoutReader is how a client reads its server's stdout: a read can be
// interrupted ([jsonrpc.ReadInterrupter]) without ending the stream, with
// a read deadline in the past that is lifted again once the read
// returned. The same deadline also ends the stream for good (stop): once
// the stream is closed, or the server exited and something else holds
// its stdout.
type stdoutReader struct {
	f *os.File

	mu          sync.Mutex
	interrupted bool // the deadline is set by interrupt
	stopped     bool // the deadline is set for good
}

func (r *stdoutReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return n, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.interrupted || r.stopped {
		return n, err
	}
	r.interrupted = false
	r.f.SetReadDeadline(time.Time{})
	return n, jsonrpc.ErrReadInterrupted
}

// interrupt makes a Read in progress, or the next one, return
// jsonrpc.ErrReadInterrupted.
func (r *stdoutReader) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interrupted || r.stopped {
		return
	}
	r.interrupted = true
	r.f.SetReadDeadline(time.Unix(1, 0))
}

// reopen lets Reads go on again after stop, until the deadline t, after
// which they fail with os.ErrDeadlineExceeded. It is for Close, once the
// server is gone, to read what it left (see readLeftovers).
func (r *stdoutReader) reopen(t time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.SetReadDeadline(t)
}

// stop makes every Read from now on fail with os.ErrDeadlineExceeded.
func (r *stdoutReader) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	r.f.SetReadDeadline(time.Unix(1, 0))
}
