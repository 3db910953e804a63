// Package memory connects two [jsonrpc.Stream] ends inside one process,
// for tests and for embedding a server in its client.
//
// Messages still cross as bytes: each Write encodes the message with
// [jsonrpc.AppendMessage] and the peer's Read decodes it with
// [jsonrpc.Decode], so what works over a pipe here works over a real
// transport, limits and all.
package memory

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// queueLen bounds the messages in flight in each direction, so that a
// writer whose peer stops reading blocks instead of piling up memory.
const queueLen = 64

// NewPipe returns two connected streams: what is written to one is read
// from the other. Messages are checked against lim when read. Once the
// pipe is closed, writes on the end that did not close it fail with an
// error wrapping io.ErrClosedPipe.
func NewPipe(lim jsonrpc.Limits) (a, b jsonrpc.Stream) {
	p := &pipe{done: make(chan struct{})}
	ab := make(chan []byte, queueLen)
	ba := make(chan []byte, queueLen)
	ea := &end{pipe: p, lim: lim, in: ba, out: ab, interrupt: make(chan struct{}, 1)}
	eb := &end{pipe: p, lim: lim, in: ab, out: ba, interrupt: make(chan struct{}, 1)}
	return ea, eb
}

// pipe is the state both ends share: closing either closes both.
type pipe struct {
	once   sync.Once
	done   chan struct{}
	closer *end // set before done is closed
}

type end struct {
	*pipe
	lim jsonrpc.Limits
	in  <-chan []byte
	out chan<- []byte
	// interrupt holds an InterruptRead not yet seen by a Read.
	interrupt chan struct{}
}

// handOver is the size from which an encoded message is handed to the
// peer in the buffer it was encoded into, rather than copied out of it.
const handOver = 4 << 10

// maxPooledBuf bounds the encode buffers kept for reuse.
const maxPooledBuf = 1 << 20

func putEncodeBuf(bp *[]byte, b []byte) {
	if cap(b) <= maxPooledBuf {
		*bp = b
		encodeBufs.Put(bp)
	}
}

var encodeBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// Read returns the next message from the peer. Once the pipe is closed,
// the closing end reads [jsonrpc.ErrClosed] at once, while the other end first
// reads what was already sent and then io.EOF.
func (e *end) Read() (*jsonrpc.Message, error) {
	select {
	case b := <-e.in:
		return jsonrpc.Decode(b, e.lim)
	case <-e.done:
	case <-e.interrupt:
		return nil, jsonrpc.ErrReadInterrupted
	}
	if e.closer == e {
		return nil, jsonrpc.ErrClosed
	}
	select {
	case b := <-e.in:
		return jsonrpc.Decode(b, e.lim)
	default:
		return nil, io.EOF
	}
}

// InterruptRead implements [jsonrpc.ReadInterrupter].
func (e *end) InterruptRead() {
	select {
	case e.interrupt <- struct{}{}:
	default: // one is already waiting
	}
}

// Write hands m, encoded, to the peer. It blocks while the peer is
// behind by a full queue, until ctx ends or the pipe is closed.
func (e *end) Write(ctx context.Context, m *jsonrpc.Message) error {
	if err := e.closedErr(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	bp := encodeBufs.Get().(*[]byte)
	enc, err := jsonrpc.AppendMessage((*bp)[:0], m)
	if err != nil {
		putEncodeBuf(bp, enc[:0])
		return err
	}
	var b []byte
	if len(enc) < handOver {
		// A small message is copied out, so the buffer goes back to work.
		b = append(make([]byte, 0, len(enc)), enc...)
		putEncodeBuf(bp, enc[:0])
	} else {
		// A large one is handed over as it is (the peer's decoded values
		// alias it), and the pool gets a fresh buffer of the same size, so
		// that large payloads are copied once per hop, not twice.
		b = enc
		if cap(enc) <= maxPooledBuf {
			*bp = make([]byte, 0, cap(enc))
			encodeBufs.Put(bp)
		}
	}
	select {
	case e.out <- b:
		return nil
	case <-e.done:
		return e.closedErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *end) closedErr() error {
	select {
	case <-e.done:
	default:
		return nil
	}
	if e.closer == e {
		return jsonrpc.ErrClosed
	}
	return fmt.Errorf("memory: the peer closed the stream: %w", io.ErrClosedPipe)
}

// Close closes the pipe, both ends at once. It is idempotent.
func (e *end) Close() error {
	e.once.Do(func() {
		e.closer = e
		close(e.done)
	})
	return nil
}
