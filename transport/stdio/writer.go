package stdio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
)

const (
	// maxQueued bounds the output queued behind a write in progress: a
	// writer that would go over it waits for the queue to be taken (or
	// gives up when its context ends), so that a peer that stops reading
	// holds up writers rather than memory.
	maxQueued = 1 << 20
	// maxPooled bounds the buffers kept for reuse, so that one huge
	// message does not pin its buffer for the life of the process.
	maxPooled = 1 << 20
	// bigLine is the size from which a queued line keeps the buffer it
	// was encoded in, rather than being copied after the lines before it.
	bigLine = 16 << 10
)

var wires = sync.Pool{New: func() any { return new(jsonrpcapi.Wire) }}

func putWire(w *jsonrpcapi.Wire) {
	if cap(w.Bytes()) <= maxPooled {
		w.Reset()
		wires.Put(w)
	}
}

// lent: a message may refer to memory its sender lends only while
// its Write runs (jsonrpcapi.Wire.Lent: a gateway's tool arguments, in
// the buffer of the HTTP request they came in, which the HTTP transport
// reads the next request into once the call is answered). Such a line is
// written from that memory only by the Write that sent it; one that
// waits for another writer's write, or is left to a detached flusher,
// has it copied in first. Once its Write returned, nothing reads the
// memory lent.

// lineWriter writes one message per line. Writers do not wait for each
// other's system calls: one of them at a time (the flusher) writes, and
// the lines the others encode meanwhile are queued, to leave when the
// flusher's own write is done, small ones together in one write system
// call. Under load many messages thus share a write; a lone one leaves
// at once, from the buffer it was encoded in. A long string of a message
// (see [jsonrpcapi.Wire]) is written from where it is, with writev(2).
type lineWriter struct {
	w io.Writer

	mu       sync.Mutex
	queue    []*jsonrpcapi.Wire // from wires: small lines together, a big one alone
	queued   int                // bytes in queue
	spare    []*jsonrpcapi.Wire // the flusher's previous batch list, for reuse
	vec      [][]byte           // the flusher's pieces of a vectored write
	flushing bool
	room     chan struct{} // closed when the queue is taken; made by a writer that waits
	err      error         // sticky

	// unsent is set when writeBuffered queued lines with no flusher to
	// send them.
	unsent   atomic.Bool
	closed   atomic.Pointer[error]
	closedCh chan struct{}
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, closedCh: make(chan struct{})}
}

func (lw *lineWriter) write(ctx context.Context, m *jsonrpc.Message) error {
	return lw.encode(ctx, m, true)
}

// writeBuffered writes m without sending it: see [jsonrpc.Batcher]. Only
// the goroutine that reads calls it, and it calls flushDeferred before it
// waits for input.
func (lw *lineWriter) writeBuffered(ctx context.Context, m *jsonrpc.Message) error {
	return lw.encode(ctx, m, false)
}

func (lw *lineWriter) encode(ctx context.Context, m *jsonrpc.Message, flush bool) error {
	if p := lw.closed.Load(); p != nil {
		return *p
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	wire := wires.Get().(*jsonrpcapi.Wire)
	if err := jsonrpc2.EncodeWire(wire, m); err != nil {
		putWire(wire)
		return err
	}
	oneLine(wire.Bytes()) // the strings referred to are plain: no newline
	wire.Write(newline)
	return lw.send(ctx, wire, flush)
}

var newline = []byte{'\n'}

// send queues the line in wire, or writes it when no write is in
// progress (and flush is set). It takes wire over.
func (lw *lineWriter) send(ctx context.Context, wire *jsonrpcapi.Wire, flush bool) error {
	n := wire.Len()
	// Batching spares system calls for small lines; a big one is sent at
	// once, so that answers waiting for their batch do not pile up in
	// memory.
	flush = flush || n >= bigLine
	lw.mu.Lock()
	for {
		if lw.err != nil {
			err := lw.err
			lw.mu.Unlock()
			putWire(wire)
			return err
		}
		if p := lw.closed.Load(); p != nil {
			lw.mu.Unlock()
			putWire(wire)
			return *p
		}
		if !lw.flushing || lw.queued == 0 || lw.queued+n <= maxQueued {
			break
		}
		if lw.room == nil {
			lw.room = make(chan struct{})
		}
		room := lw.room
		lw.mu.Unlock()
		select {
		case <-room:
		case <-lw.closedCh:
		case <-ctx.Done():
			putWire(wire)
			return ctx.Err()
		}
		lw.mu.Lock()
	}
	if lw.flushing || !flush {
		// The line waits for another writer's write, beyond this Write:
		// what it was lent is copied in (see lent).
		if wire.Lent() {
			wire.Own()
		}
		lw.enqueue(wire, n)
		if !lw.flushing {
			lw.unsent.Store(true)
		}
		lw.mu.Unlock()
		return nil
	}
	lw.flushing = true
	lw.enqueue(wire, n) // after the lines writeBuffered left, if any
	batch := lw.takeQueue()
	lw.mu.Unlock()
	return lw.drain(batch, false)
}

// enqueue adds a line of n bytes to the queue; the caller holds mu.
func (lw *lineWriter) enqueue(wire *jsonrpcapi.Wire, n int) {
	lw.queued += n
	// Only own bytes can be appended to a line: neither may refer.
	if k := len(lw.queue); k > 0 && n < bigLine && !wire.Refers() {
		if last := lw.queue[k-1]; len(last.Bytes()) < bigLine && !last.Refers() {
			last.Write(wire.Bytes())
			putWire(wire)
			return
		}
	}
	lw.queue = append(lw.queue, wire)
}

// takeQueue hands the queue to the flusher; the caller holds mu.
func (lw *lineWriter) takeQueue() []*jsonrpcapi.Wire {
	q := lw.queue
	lw.queue, lw.spare = lw.spare[:0], nil
	lw.queued = 0
	lw.unsent.Store(false)
	lw.makeRoom()
	return q
}

// makeRoom wakes the writers waiting for the queue to be taken; the
// caller holds mu.
func (lw *lineWriter) makeRoom() {
	if lw.room != nil {
		close(lw.room)
		lw.room = nil
	}
}

// drain is the flusher's loop: it writes batch, then what was queued
// meanwhile, until nothing is left. A flusher that is a writer (not
// detached) does not wait for a pipe the peer stopped reading: when the
// pipe is full it hands what is left to a goroutine of its own and
// returns, so that its caller's deadline still counts (the line is
// queued, as behind another writer's).
func (lw *lineWriter) drain(batch []*jsonrpcapi.Wire, detached bool) error {
	for {
		var err error
		for i, wire := range batch {
			if err == nil {
				var rest [][]byte
				rest, err = lw.writeWire(wire, detached)
				if err == errWouldBlock {
					lw.detach(rest, batch[i:])
					return nil
				}
			}
			putWire(wire)
			batch[i] = nil
		}
		lw.mu.Lock()
		lw.spare = batch[:0]
		if err != nil {
			lw.err = err
			for _, wire := range lw.queue {
				putWire(wire)
			}
			lw.queue, lw.queued = nil, 0
		}
		if err != nil || len(lw.queue) == 0 {
			lw.flushing = false
			lw.makeRoom()
			lw.mu.Unlock()
			return err
		}
		batch = lw.takeQueue()
		lw.mu.Unlock()
	}
}

// writeWire writes one queued wire; only the flusher calls it. Unless
// it may wait (wait), it returns errWouldBlock and what is left of the
// wire when the pipe is full.
func (lw *lineWriter) writeWire(wire *jsonrpcapi.Wire, wait bool) ([][]byte, error) {
	if !wire.Refers() {
		lw.vec = append(lw.vec[:0], wire.Bytes())
	} else {
		lw.vec = wire.Buffers(lw.vec[:0])
	}
	var rest [][]byte
	var err error
	if wait {
		err = writeVectored(lw.w, lw.vec)
	} else {
		rest, err = tryWriteVectored(lw.w, lw.vec)
	}
	if err == errWouldBlock {
		return rest, err // lw.vec is still in use
	}
	clear(lw.vec) // keeps no string alive
	return nil, err
}

// errWouldBlock is a write that would wait for the peer to read.
var errWouldBlock = errors.New("stdio: the pipe is full")

// detach has a goroutine of its own write rest, the end of the first of
// wires, then the other wires and what is queued meanwhile, waiting for
// the peer to read; the flusher's caller returns at once. It stays the
// flusher until the queue is empty, so that lines keep their order.
func (lw *lineWriter) detach(rest [][]byte, wires []*jsonrpcapi.Wire) {
	// The lines are written after the Write that detaches them returned:
	// what they were lent is copied in first (see lent).
	if wires[0].Lent() {
		var b []byte
		for _, p := range rest {
			b = append(b, p...)
		}
		rest = [][]byte{b}
		clear(lw.vec)
	}
	for _, w := range wires[1:] {
		if w.Lent() {
			w.Own()
		}
	}
	go func() {
		err := writeVectored(lw.w, rest)
		clear(lw.vec)
		putWire(wires[0])
		wires[0] = nil
		if err != nil {
			lw.mu.Lock()
			lw.err = err
			lw.mu.Unlock()
		}
		lw.drain(wires[1:], true)
	}()
}

// flushDeferred sends what writeBuffered queued, unless a flusher is at
// work, which sends it.
func (lw *lineWriter) flushDeferred() {
	if !lw.unsent.Load() {
		return
	}
	lw.mu.Lock()
	if lw.flushing || lw.err != nil || len(lw.queue) == 0 {
		lw.mu.Unlock()
		return
	}
	lw.flushing = true
	batch := lw.takeQueue()
	lw.mu.Unlock()
	lw.drain(batch, false)
}

// settle waits, up to d, until what was written is in the pipe: a
// detached flusher may still be writing after its caller returned. It
// reports whether it is.
func (lw *lineWriter) settle(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		lw.mu.Lock()
		if !lw.flushing || lw.err != nil {
			lw.mu.Unlock()
			return lw.err == nil
		}
		if lw.room == nil {
			lw.room = make(chan struct{})
		}
		room := lw.room
		lw.mu.Unlock()
		select {
		case <-room:
		case <-t.C:
			return false
		}
	}
}

// close makes every later write fail with err. It does not wait for a
// write in progress, which may be stuck on a pipe nobody reads: the
// caller unblocks that one, if it can, by closing the file.
func (lw *lineWriter) close(err error) {
	if lw.closed.CompareAndSwap(nil, &err) {
		close(lw.closedCh)
	}
}

// oneLine replaces the newlines of b, which can only be insignificant
// white space in valid JSON (a newline inside a string is escaped), so
// that raw params or results formatted over several lines cannot break
// the framing.
func oneLine(b []byte) []byte {
	i := bytes.IndexByte(b, '\n')
	for i >= 0 {
		b[i] = ' '
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return b
}

// writeEach writes the pieces in order, with a Write each.
func writeEach(w io.Writer, pieces [][]byte) error {
	for _, p := range pieces {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
