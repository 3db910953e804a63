package jsonrpc2

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
)

// queue is one direction of an in-memory pipe: an unbounded list of
// encoded messages. Blocking uses channels only, so that goroutines waiting
// on a queue are durably blocked inside a testing/synctest bubble.
type queue struct {
	mu    sync.Mutex
	lines [][]byte
	eof   bool          // the writing side closed; readers get io.EOF after the lines
	wake  chan struct{} // signalled (capacity 1) when lines or eof change
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// push appends one line; it reports false when the queue was closed.
func (q *queue) push(line []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.eof {
		return false
	}
	q.lines = append(q.lines, line)
	q.signal()
	return true
}

func (q *queue) closeWrite() {
	q.mu.Lock()
	q.eof = true
	q.signal()
	q.mu.Unlock()
}

var errPipeClosed = errors.New("pipe closed")

// pop returns the next line, io.EOF once the queue is closed and empty, or
// errPipeClosed when stop is closed first.
func (q *queue) pop(stop <-chan struct{}) ([]byte, error) { return q.popOr(stop, nil) }

// popOr is pop, cut short by intr (when not nil) with ErrReadInterrupted.
func (q *queue) popOr(stop, intr <-chan struct{}) ([]byte, error) {
	for {
		select {
		case <-intr:
			return nil, ErrReadInterrupted
		default:
		}
		q.mu.Lock()
		if len(q.lines) > 0 {
			line := q.lines[0]
			q.lines = q.lines[1:]
			if len(q.lines) > 0 || q.eof {
				q.signal() // let the next reader in
			}
			q.mu.Unlock()
			return line, nil
		}
		eof := q.eof
		q.mu.Unlock()
		if eof {
			q.signal()
			return nil, io.EOF
		}
		select {
		case <-q.wake:
		case <-stop:
			return nil, errPipeClosed
		case <-intr:
			return nil, ErrReadInterrupted
		}
	}
}

// pipeStream is one end of an in-memory pipe: a [Stream] that encodes
// what it writes with AppendMessage and decodes what it reads with Decode,
// as a line-oriented transport does.
type pipeStream struct {
	in, out *queue
	lim     Limits

	closeOnce sync.Once
	closed    chan struct{}
}

// newPipe returns the two ends of a pipe.
func newPipe() (a, b *pipeStream) {
	ab, ba := newQueue(), newQueue()
	return newPipeStream(ba, ab), newPipeStream(ab, ba)
}

func newPipeStream(in, out *queue) *pipeStream {
	return &pipeStream{in: in, out: out, closed: make(chan struct{})}
}

func (p *pipeStream) Read() (*Message, error) {
	line, err := p.in.pop(p.closed)
	if err != nil {
		return nil, err
	}
	return Decode(line, p.lim)
}

func (p *pipeStream) Write(ctx context.Context, m *Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-p.closed:
		return errPipeClosed
	default:
	}
	b, err := AppendMessage(nil, m)
	if err != nil {
		return err
	}
	if !p.out.push(b) {
		return errPipeClosed
	}
	return nil
}

func (p *pipeStream) Close() error {
	p.closeOnce.Do(func() {
		close(p.closed)
		p.out.closeWrite()
	})
	return nil
}

// rawPeer drives the other end of a pipe byte by byte, for tests that need
// to send exactly some text or inspect exactly what was sent.
type rawPeer struct {
	t       testing.TB
	in, out *queue // in: what the Conn wrote; out: what the Conn reads
	stop    chan struct{}
}

// newRawPeer returns a stream for a Conn and the peer driving its other end.
func newRawPeer(t testing.TB) (*pipeStream, *rawPeer) {
	toConn, fromConn := newQueue(), newQueue()
	s := newPipeStream(toConn, fromConn)
	return s, &rawPeer{t: t, in: fromConn, out: toConn, stop: make(chan struct{})}
}

// send delivers line to the Conn as one message.
func (p *rawPeer) send(line string) {
	p.t.Helper()
	if !p.out.push([]byte(line)) {
		p.t.Fatalf("send %s: pipe closed", line)
	}
}

// recv returns the next line the Conn wrote.
func (p *rawPeer) recv() string {
	p.t.Helper()
	line, err := p.in.pop(p.stop)
	if err != nil {
		p.t.Fatalf("recv: %v", err)
	}
	return string(line)
}

// recvMsg returns the next message the Conn wrote, decoded.
func (p *rawPeer) recvMsg() *Message {
	p.t.Helper()
	line := p.recv()
	m, err := Decode([]byte(line), Limits{})
	if err != nil {
		p.t.Fatalf("the Conn wrote an invalid message %s: %v", line, err)
	}
	return m
}

// pending returns what the Conn wrote that was not read yet.
func (p *rawPeer) pending() []string {
	p.in.mu.Lock()
	defer p.in.mu.Unlock()
	var s []string
	for _, l := range p.in.lines {
		s = append(s, string(l))
	}
	return s
}

// closeWrite makes the Conn's next Read return io.EOF after the lines
// already sent.
func (p *rawPeer) closeWrite() { p.out.closeWrite() }
