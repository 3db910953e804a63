package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// MaxWorkers bounds the calls one connection has in flight. A request's id
// is seq*MaxWorkers + worker, so the reader hands each answer straight to
// the worker waiting for it, without a shared table.
const MaxWorkers = 64

// Conn is a connection the harness drives: each worker (0 ≤ worker <
// the workers it was opened for) calls from its own goroutine.
type Conn interface {
	Call(worker int, msg []byte) error
	Protocol() string // the negotiated protocol version
	Body() string     // "line" (stdio), "json" or "sse" (the HTTP body kind seen)
	Close() error
}

type stdioAnswer struct {
	id   int64
	line *[]byte
}

type stdioWorker struct {
	seq   int64
	buf   []byte
	timer *time.Timer
	calls int
}

// Stdio is a server spawned as a child, spoken to over its stdin and stdout.
type Stdio struct {
	era       Era
	cmd       *exec.Cmd
	stdin     io.WriteCloser
	wmu       sync.Mutex
	slots     [MaxWorkers]chan stdioAnswer
	workers   []stdioWorker
	done      chan struct{}
	readErr   error
	lines     sync.Pool
	timeout   time.Duration
	protocol  string
	Unmatched atomic.Int64 // answers nobody waited for (late after a timeout, or unknown ids)
}

// SpawnStdio starts command (through sh -c 'exec …', so the server is the
// process itself), performs the era's handshake, and returns the
// connection for workers concurrent callers.
func SpawnStdio(command string, era Era, workers int, timeout time.Duration) (*Stdio, error) {
	if workers > MaxWorkers {
		return nil, fmt.Errorf("at most %d workers", MaxWorkers)
	}
	cmd := exec.Command("sh", "-c", "exec "+command)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Stdio{era: era, cmd: cmd, stdin: stdin, done: make(chan struct{}), timeout: timeout,
		workers: make([]stdioWorker, workers)}
	s.lines.New = func() any { b := make([]byte, 0, 4096); return &b }
	for i := range s.slots {
		s.slots[i] = make(chan stdioAnswer, 4)
	}
	for i := range s.workers {
		s.workers[i].timer = time.NewTimer(time.Hour)
		s.workers[i].timer.Stop()
	}
	go s.read(stdout)
	if err := s.handshake(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Pid is the server's process id.
func (s *Stdio) Pid() int { return s.cmd.Process.Pid }

// Protocol is the negotiated protocol version.
func (s *Stdio) Protocol() string { return s.protocol }

// Body is "line": stdio has one framing.
func (s *Stdio) Body() string { return "line" }

func (s *Stdio) handshake() error {
	if err := s.write(append(s.era.handshake(0), '\n')); err != nil {
		return err
	}
	line, err := s.wait(&s.workers[0], 0)
	if err != nil {
		return err
	}
	defer s.lines.Put(line)
	if s.protocol, err = s.era.checkHandshake(*line); err != nil {
		return err
	}
	if s.era == Legacy {
		return s.write([]byte(initialized + "\n"))
	}
	return nil
}

func (s *Stdio) write(b []byte) error {
	s.wmu.Lock()
	_, err := s.stdin.Write(b)
	s.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%w: writing to the server: %v", ErrFatal, err)
	}
	return nil
}

// Call sends one tools/call of echo with msg and checks its answer.
func (s *Stdio) Call(worker int, msg []byte) error {
	w := &s.workers[worker]
	w.seq++
	w.calls++
	id := w.seq*MaxWorkers + int64(worker)
	w.buf = append(s.era.AppendCall(w.buf[:0], id, EchoTool, msg), '\n')
	if err := s.write(w.buf); err != nil {
		return err
	}
	line, err := s.wait(w, id)
	if err != nil {
		return err
	}
	defer s.lines.Put(line)
	if err := CheckAnswer(*line, msg); err != nil {
		return err
	}
	if w.calls%64 == 0 {
		return FullCheck(*line, id, msg)
	}
	return nil
}

// wait returns the answer to id, skipping late answers to earlier calls.
func (s *Stdio) wait(w *stdioWorker, id int64) (*[]byte, error) {
	w.timer.Reset(s.timeout)
	defer w.timer.Stop()
	slot := s.slots[id%MaxWorkers]
	for {
		select {
		case a := <-slot:
			if a.id == id {
				return a.line, nil
			}
			s.lines.Put(a.line)
			s.Unmatched.Add(1)
		case <-w.timer.C:
			return nil, fmt.Errorf("no answer to id %d within %v", id, s.timeout)
		case <-s.done:
			return nil, fmt.Errorf("%w: the server's stdout ended: %v", ErrFatal, s.readErr)
		}
	}
}

// read hands every answer to the slot of the worker its id names.
func (s *Stdio) read(stdout io.Reader) {
	br := bufio.NewReaderSize(stdout, 1<<16)
	for {
		line := s.lines.Get().(*[]byte)
		if err := readLine(br, line); err != nil {
			s.readErr = err
			close(s.done)
			return
		}
		id, ok := MessageID(*line)
		if !ok || id < 0 {
			s.lines.Put(line) // a notification, or not ours
			continue
		}
		select {
		case s.slots[id%MaxWorkers] <- stdioAnswer{id, line}:
		default:
			s.lines.Put(line)
			s.Unmatched.Add(1)
		}
	}
}

// readLine reads one line, without its newline, into *dst.
func readLine(br *bufio.Reader, dst *[]byte) error {
	*dst = (*dst)[:0]
	for {
		part, err := br.ReadSlice('\n')
		*dst = append(*dst, part...)
		switch {
		case err == nil:
			*dst = (*dst)[:len(*dst)-1]
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(*dst) > 0 && err == io.EOF:
			return nil
		default:
			return err
		}
	}
}

// Close ends the server: stdin closed, then a kill if it has not exited
// within 3 seconds.
func (s *Stdio) Close() error {
	s.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-exited
	}
	return nil
}
