package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

const (
	// exitWait bounds how long Read waits, after the server's stdout
	// ends, for its exit status and the end of its stderr, so that the
	// error it returns says why without making the caller wait.
	exitWait = 100 * time.Millisecond
	// goneWait bounds how long the error of a server that is gone waits
	// for its exit status and the end of its stderr (see gone). It is
	// longer than exitWait: it is only spent when something is wrong
	// (the server closed its stdout and runs on, or a process it left
	// holds its stderr), and on a loaded machine reaping an exited
	// server can take longer than 100 ms (host TestStdioStartFailure
	// lost the exit status 2 times in 1,000 runs at load 14 on 2 cores).
	goneWait = time.Second
	// stdoutGrace is how long stdout may stay open after the server
	// exited (a process it started may hold it) before Read gives up on
	// it.
	stdoutGrace = 100 * time.Millisecond
	// leftoverBytes bounds what Close reads of the server's stdout once
	// it is gone (see readLeftovers): what an exited server left fits in
	// the pipe (pipeSize on Linux); more comes only from a process that
	// still holds stdout, which must not keep Close busy.
	leftoverBytes = 1 << 20
	// Tail of stderr shown in an [ExitError].
	tailLines = 20
	tailBytes = 2 << 10
)

// ClientStream is the client's side of a server subprocess started by
// [Command.Connect]. Besides being a [jsonrpc.Stream], it tells what the
// server wrote on stderr and when and how it exited.
type ClientStream struct {
	cmd        *exec.Cmd
	stdin      *os.File
	stdout     *os.File
	out        *stdoutReader // reads stdout
	stderrPipe *os.File

	lr         *lineReader
	noise      *noise // the lines of stdout skipped
	w          *lineWriter
	stderr     *ring
	copyStderr io.Writer

	closeTimeout, termTimeout time.Duration
	goneWait                  time.Duration // for gone: goneWait, longer in tests

	wg         sync.WaitGroup // the wait and stderr goroutines
	done       chan struct{}  // closed once the child has been reaped
	waitErr    error          // from cmd.Wait; set before done is closed
	stderrDone chan struct{}
	stdoutEOF  chan struct{}
	waited     chan struct{} // closed when wait returns: it no longer stops out
	readMu     sync.Mutex    // held by Read and readLeftovers: one reader of lr at a time
	readErr    error         // sticky end of input; only Read touches it

	closeOnce sync.Once
	closing   chan struct{}
	strays    *strays     // processes of the server outside its group
	spoke     atomic.Bool // the server sent a message
}

// quickTerm is how long a server that never spoke gets after SIGTERM.
const quickTerm = 100 * time.Millisecond

// Read returns the next message from the server. Lines that are not JSON
// at all are logged and skipped. Once the server is gone Read returns an
// *[ExitError]; after Close it returns [jsonrpc.ErrClosed].
func (s *ClientStream) Read() (*jsonrpc.Message, error) {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if s.readErr != nil {
		return nil, s.readErr
	}
	select {
	case <-s.closing:
		s.readErr = jsonrpc.ErrClosed
		return nil, jsonrpc.ErrClosed
	default:
	}
	m, err := s.lr.read()
	if err == nil && m != nil && !s.spoke.Load() {
		s.spoke.Store(true)
	}
	if err == nil || err == jsonrpc.ErrReadInterrupted || isDecodeError(err) {
		return m, err
	}
	select {
	case <-s.closing:
		err = jsonrpc.ErrClosed
	default:
		err = s.endOfInput(err)
	}
	s.readErr = err
	return nil, err
}

// endOfInput turns the error that ended the server's stdout into the
// error Read reports.
func (s *ClientStream) endOfInput(err error) error {
	if err == io.EOF {
		close(s.stdoutEOF)
		return s.gone()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// Set by wait: the server exited but stdout is still held open.
		return s.gone()
	}
	return fmt.Errorf("stdio: reading from the server: %w", err)
}

// gone is the one place that builds the *[ExitError] of a server that is
// gone, whichever pipe noticed first: it waits, up to s.goneWait in all,
// for the server to be reaped and for the end of its stderr, so that
// the error carries both its exit status and what it said before it
// went.
func (s *ClientStream) gone() *ExitError {
	t := time.NewTimer(s.goneWait)
	defer t.Stop()
	for _, ch := range []chan struct{}{s.done, s.stderrDone} {
		select {
		case <-ch:
		case <-t.C:
			return s.exitError()
		}
	}
	return s.exitError()
}

// exitError describes the server's end as far as it is known now.
func (s *ClientStream) exitError() *ExitError {
	e := &ExitError{Code: -1, Stderr: s.stderr.tail(tailLines, tailBytes)}
	select {
	case <-s.done:
	default:
		return e
	}
	if st := s.cmd.ProcessState; st != nil {
		e.Status, e.Code = st.String(), st.ExitCode()
	} else if s.waitErr != nil {
		e.Status = s.waitErr.Error()
	}
	return e
}

// Recycle takes back the memory of a long message (one of 16 KiB or
// more; shorter ones share a buffer with others and have no Buffer) once
// its reader is done with it ([jsonrpc.Recycler]): the next long message
// is read into it. A gateway passing large answers on gives each back
// once it is written to its client, and the answers then make no garbage
// for the collector.
func (s *ClientStream) Recycle(m *jsonrpc.Message) {
	if b := m.Buffer; b != nil {
		m.Buffer = nil
		s.lr.lend.put(b)
	}
}

// InterruptRead implements [jsonrpc.ReadInterrupter].
func (s *ClientStream) InterruptRead() { s.out.interrupt() }

// Write sends a message to the server. Once the server is gone, it
// returns an *[ExitError] rather than a broken pipe.
func (s *ClientStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	err := s.w.write(ctx, m)
	if err == nil || err == jsonrpc.ErrClosed || ctx.Err() != nil {
		return err
	}
	// A failed write to a server that is exiting usually comes before
	// it has been reaped: wait for its end as Read does.
	e := s.gone()
	select {
	case <-s.done:
		return e
	default: // it closed its stdin and runs on
		return fmt.Errorf("stdio: writing to the server: %w", err)
	}
}

// Close stops the server the way the specification asks: it closes the
// server's stdin and waits for it to exit, then sends SIGTERM to its
// process group, then SIGKILL. It returns once the server has exited and
// been reaped and the stream's goroutines have ended; processes left in
// the group are sent the same signals. Close is safe to call more than
// once, from any goroutine; later calls wait for the first.
func (s *ClientStream) Close() error {
	s.closeOnce.Do(s.shutdown)
	return nil
}

func (s *ClientStream) shutdown() {
	close(s.closing)
	s.w.close(jsonrpc.ErrClosed)
	// What was written may still be on its way to a server that reads
	// slowly: give it a moment before its stdin closes.
	s.w.settle(exitWait)
	// Closing stdin is the server's cue to exit; it also releases a
	// write stuck on a full pipe. stdout stays open, so that the server
	// can still write while it winds down, but a blocked Read returns.
	s.stdin.Close()
	s.out.stop()

	p := s.cmd.Process
	// What left the server's group is found while the server runs, by
	// descent, and at the end by the pipes it holds.
	s.strays.scan()
	closeTimeout, termTimeout := s.closeTimeout, s.termTimeout
	if !s.spoke.Load() {
		// A server that never said anything (it did not start in time,
		// or hangs) has nothing to finish: it is stopped at once, so
		// that a Connect that gave up on it returns at its deadline.
		closeTimeout, termTimeout = 0, min(termTimeout, quickTerm)
	}
	// stragglers is when what is left in the group gets SIGKILL; zero
	// once it has.
	stragglers := time.Now().Add(termTimeout)
	if !waitFor(s.done, closeTimeout) {
		terminateGroup(p)
		stragglers = time.Now().Add(termTimeout)
		if !waitFor(s.done, termTimeout) {
			killGroup(p)
			stragglers = time.Time{}
			<-s.done
		}
	} else if groupAlive(p) {
		// The server is gone; what it left in its group goes too.
		terminateGroup(p)
		stragglers = time.Now().Add(termTimeout)
	}
	if !stragglers.IsZero() && groupAlive(p) {
		for d := time.Millisecond; groupAlive(p) && time.Now().Before(stragglers); d = min(2*d, 20*time.Millisecond) {
			time.Sleep(d)
		}
		killGroup(p)
	}
	s.strays.scan()
	s.strays.stop(termTimeout)
	s.readLeftovers()
	s.stdout.Close()
	// What the server wrote on stderr is read to the end unless
	// something outside the group holds the pipe.
	if !waitFor(s.stderrDone, exitWait) {
		s.stderrPipe.Close()
	}
	s.wg.Wait()
	s.stderrPipe.Close()
	s.noise.flush()
}

// readLeftovers reads, once the server is gone, what is left of its
// stdout that no Read took, so that Skipped counts every line of noise
// it wrote. A server that prints a banner and exits at once would
// otherwise get the hint or not depending on a race: when the client's
// first write fails (the server is gone) nobody reads its stdout, and
// only when the write wins are the lines read. It is done here, not when
// a write fails, because the messages it reads are dropped: until Close
// they belong to Read (an answer written before the server died still
// ends its call). It waits for a Read in progress, which shutdown has
// stopped, and reads at most leftoverBytes, for at most stdoutGrace (a
// process the server left may hold its stdout open).
func (s *ClientStream) readLeftovers() {
	s.readMu.Lock()
	defer s.readMu.Unlock()
	if err := s.lr.readErr; err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return // the end of stdout was read, or it cannot be
	}
	// wait stops out when stdout outlives the server: once done and
	// closing are closed it returns at once, and stops it no more.
	<-s.waited
	s.lr.readErr = nil // the deadline was the stream's own (out.stop)
	s.lr.r = io.LimitReader(s.out, leftoverBytes)
	s.out.reopen(time.Now().Add(stdoutGrace))
	defer s.out.stop()
	for {
		m, err := s.lr.read()
		if m != nil {
			s.Recycle(m)
		}
		if err != nil && !isDecodeError(err) {
			return
		}
	}
}

// waitFor reports whether ch was closed within d.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// wait reaps the server as soon as it exits.
func (s *ClientStream) wait() {
	defer s.wg.Done()
	defer close(s.waited)
	s.waitErr = s.cmd.Wait()
	close(s.done)
	// A process the server started may still hold its stdout: once what
	// the server wrote has had time to be read, make Read give up.
	t := time.NewTimer(stdoutGrace)
	defer t.Stop()
	select {
	case <-s.stdoutEOF:
	case <-s.closing:
	case <-t.C:
		s.out.stop()
	}
}

// drainStderr keeps reading the server's stderr so that the server never
// blocks on it, keeping the end in a ring and passing whole lines on.
func (s *ClientStream) drainStderr() {
	defer s.wg.Done()
	defer close(s.stderrDone)
	buf := make([]byte, 4096)
	var line []byte // an unfinished line for copyStderr
	for {
		n, err := s.stderrPipe.Read(buf)
		if n > 0 {
			s.stderr.Write(buf[:n])
			if s.copyStderr != nil {
				line = s.forward(line, buf[:n])
			}
		}
		if err != nil {
			if len(line) > 0 {
				s.copyStderr.Write(line)
			}
			return
		}
	}
}

// forward passes the complete lines of pending+p to copyStderr and
// returns what is left of an unfinished line.
func (s *ClientStream) forward(pending, p []byte) []byte {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			pending = append(pending, p...)
			if len(pending) >= 4096 { // a very long line goes in pieces
				s.copyStderr.Write(pending)
				pending = pending[:0]
			}
			return pending
		}
		if len(pending) > 0 {
			pending = append(pending, p[:i+1]...)
			s.copyStderr.Write(pending)
			pending = pending[:0]
		} else {
			s.copyStderr.Write(p[:i+1])
		}
		p = p[i+1:]
	}
	return pending
}

// Stderr returns the end of what the server wrote on stderr (up to
// [Command.StderrBytes]), to show when it misbehaves.
func (s *ClientStream) Stderr() string { return string(s.stderr.bytes()) }

// Skipped reports how many lines of the server's stdout were skipped
// because they are not JSON, and the start of the first, quoted (Go
// syntax, control characters escaped): a server that prints its logs on
// stdout never answers, and an error that shows them says why. The count
// is complete once Read has returned the end of the stream, and once
// Close has returned (it reads what the server left on stdout).
func (s *ClientStream) Skipped() (lines int, first string) { return s.noise.skipped() }

// Pid returns the server's process id, which is also its process group.
func (s *ClientStream) Pid() int { return s.cmd.Process.Pid }

// Done is closed when the server process has exited, whoever ended it.
func (s *ClientStream) Done() <-chan struct{} { return s.done }

// ExitErr reports how the server ended once [ClientStream.Done] is
// closed: nil for exit status 0 (and while it runs), else an *[ExitError]
// (which may wait briefly for the end of the server's stderr).
func (s *ClientStream) ExitErr() error {
	select {
	case <-s.done:
	default:
		return nil
	}
	if s.waitErr == nil {
		return nil
	}
	return s.gone()
}
