package stdio

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// ServerStream is the stream of a server launched by its client: requests
// come in on os.Stdin and everything written goes to os.Stdout, which must
// carry nothing but protocol messages (log to os.Stderr instead).
//
// Close makes a blocked Read return even though os.Stdin is usually not
// pollable: on Linux, when stdin is a pipe or a terminal, the stream reads
// from a non-blocking descriptor of its own opened through /proc/self/fd/0,
// and when it is a stream socket (as Node makes for a child's standard
// streams) from a duplicate of it with MSG_DONTWAIT; either way it waits
// for input in poll(2), which Close interrupts. Elsewhere see
// [NewServerStream]. Likewise, when stdout is a pipe or a terminal, the
// stream writes to a non-blocking descriptor of its own opened through
// /proc/self/fd/1, and when it is a stream socket to a duplicate with
// MSG_DONTWAIT, so that a Write does not wait in write(2) for a client
// that stopped reading beyond its context. Close closes neither
// os.Stdin nor os.Stdout.
func ServerStream() jsonrpc.Stream {
	return NewServerStream(os.Stdin, os.Stdout, jsonrpc.Limits{})
}

// NewServerStream returns a stream that reads messages from r and writes
// them to w, one per line, within lim. It is the server side of the stdio
// transport, and also suits any byte stream (a socket, a pipe) that
// should carry MCP with the same framing.
//
// Close does not close r or w, which belong to the caller, but it does
// make a blocked Read return at once. When r supports read deadlines (an
// *os.File over a pipe, a net.Conn), Read runs on the caller's goroutine
// and Close interrupts it with a deadline. Otherwise the stream reads
// ahead on a goroutine of its own, which Close releases as soon as r.Read
// returns: close r as well to end it promptly.
func NewServerStream(r io.Reader, w io.Writer, lim jsonrpc.Limits) jsonrpc.Stream {
	growPipe(r)
	growPipe(w)
	out, releaseOut := reopenForWriting(w)
	s := &serverStream{w: newLineWriter(out), releaseOut: releaseOut, closed: make(chan struct{})}
	src, interrupt := interruptible(r)
	s.lr = newLineReader(src, lim)
	s.lr.beforeWait = s.w.flushDeferred
	s.interrupt = interrupt
	if interrupt == nil {
		s.results = make(chan readResult)
		go s.pump()
	}
	return s
}

type serverStream struct {
	lr *lineReader
	w  *lineWriter
	// releaseOut closes the descriptor of its own that w writes to, if
	// any (see reopenForWriting).
	releaseOut func() error

	// interrupt makes a blocked read of lr return; nil when lr cannot be
	// interrupted, and then the reads happen on pump.
	interrupt func() error
	results   chan readResult
	readErr   error // sticky end of input; only Read touches it

	closeOnce sync.Once
	closed    chan struct{}
}

type readResult struct {
	m   *jsonrpc.Message
	err error
}

func (s *serverStream) Read() (*jsonrpc.Message, error) {
	if s.readErr != nil {
		return nil, s.readErr
	}
	select {
	case <-s.closed:
		s.readErr = jsonrpc.ErrClosed
		return nil, jsonrpc.ErrClosed
	default:
	}
	var r readResult
	if s.results == nil {
		r.m, r.err = s.lr.read()
	} else {
		select {
		case r = <-s.results:
		case <-s.closed:
			r.err = jsonrpc.ErrClosed
		}
	}
	if r.err != nil && !isDecodeError(r.err) {
		select {
		case <-s.closed:
			r.err = jsonrpc.ErrClosed // whatever the interrupted read said
		default:
		}
		s.readErr = r.err
	}
	return r.m, r.err
}

// pump reads ahead for a reader that cannot be interrupted.
func (s *serverStream) pump() {
	for {
		m, err := s.lr.read()
		select {
		case s.results <- readResult{m, err}:
		case <-s.closed:
			return
		}
		if err != nil && !isDecodeError(err) {
			return
		}
	}
}

func (s *serverStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	return s.w.write(ctx, m)
}

// Buffered implements [jsonrpc.Batcher].
func (s *serverStream) Buffered() bool {
	return s.results == nil && s.readErr == nil && s.lr.buffered()
}

// WriteBuffered implements [jsonrpc.Batcher].
func (s *serverStream) WriteBuffered(ctx context.Context, m *jsonrpc.Message) error {
	return s.w.writeBuffered(ctx, m)
}

func (s *serverStream) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		if s.interrupt != nil {
			s.interrupt()
		}
		s.w.close(jsonrpc.ErrClosed)
		// The last answers may still be on their way to a client that
		// reads slowly: the process must not exit before they left.
		s.w.settle(settleTimeout)
		if s.releaseOut != nil {
			// A detached flusher still waiting for room gives up.
			s.releaseOut()
		}
	})
	return nil
}

// settleTimeout bounds how long Close waits for the answers still on
// their way to the client.
const settleTimeout = 5 * time.Second

func isDecodeError(err error) bool {
	var de *jsonrpc.DecodeError
	return errors.As(err, &de)
}

// deadliner is what an interruptible reader offers: *os.File and net.Conn.
type deadliner interface {
	SetReadDeadline(t time.Time) error
}

// interruptible returns the reader to read from and the function that
// makes a blocked read of it return, or nil if there is none.
func interruptible(r io.Reader) (io.Reader, func() error) {
	if d, ok := r.(deadliner); ok && d.SetReadDeadline(time.Time{}) == nil {
		return r, func() error { return d.SetReadDeadline(time.Unix(1, 0)) }
	}
	if f, ok := r.(*os.File); ok {
		if g, interrupt := reopen(f); g != nil {
			return g, interrupt
		}
	}
	return r, nil
}
