package stdio

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/ferrymcp/ferry/jsonrpc"
)

const (
	writeBufSize = 32 << 10
	// maxPooled bounds the encoding buffers kept for reuse, so that one
	// huge message does not pin its buffer for the life of the process.
	maxPooled = 1 << 20
)

var encodeBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// lineWriter writes one message per line. Concurrent writers queue on a
// lock; each one flushes only if nobody is queued behind it, so answers
// produced together leave in one write system call while a lone message
// is flushed at once.
type lineWriter struct {
	// lock is a one-slot semaphore rather than a sync.Mutex so that a
	// writer queued behind one stuck on a full pipe can give up when its
	// context ends.
	lock    chan struct{}
	waiting atomic.Int32
	dirty   atomic.Bool // output left buffered for a queued writer
	bw      *bufio.Writer
	err     error // sticky; guarded by lock
	closed  atomic.Pointer[error]
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{lock: make(chan struct{}, 1), bw: bufio.NewWriterSize(w, writeBufSize)}
}

func (lw *lineWriter) write(ctx context.Context, m *jsonrpc.Message) error {
	if p := lw.closed.Load(); p != nil {
		return *p
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	bp := encodeBufs.Get().(*[]byte)
	b, err := jsonrpc.AppendMessage((*bp)[:0], m)
	if err == nil {
		b = append(oneLine(b), '\n')
		err = lw.writeLine(ctx, b)
	}
	if cap(b) <= maxPooled {
		*bp = b[:0]
		encodeBufs.Put(bp)
	}
	return err
}

func (lw *lineWriter) writeLine(ctx context.Context, b []byte) error {
	lw.waiting.Add(1)
	select {
	case lw.lock <- struct{}{}:
	case <-ctx.Done():
		lw.waiting.Add(-1)
		// The writer ahead may have left its line buffered for us.
		lw.flushIfIdle()
		return ctx.Err()
	}
	lw.waiting.Add(-1)
	if p := lw.closed.Load(); p != nil && lw.err == nil {
		lw.err = *p
	}
	if lw.err == nil {
		_, lw.err = lw.bw.Write(b)
		if lw.err == nil {
			if lw.waiting.Load() == 0 {
				lw.dirty.Store(false)
				lw.err = lw.bw.Flush()
			} else {
				lw.dirty.Store(true)
			}
		}
	}
	err := lw.err
	<-lw.lock
	lw.flushIfIdle()
	return err
}

// flushIfIdle flushes what a writer left buffered for one queued behind it
// that then gave up. Every holder of the lock checks again after letting
// go of it, so a buffered line is never stranded: if the lock is taken,
// its holder will.
func (lw *lineWriter) flushIfIdle() {
	for lw.dirty.Load() && lw.waiting.Load() == 0 {
		select {
		case lw.lock <- struct{}{}:
		default:
			return
		}
		if lw.waiting.Load() == 0 && lw.dirty.Load() {
			lw.dirty.Store(false)
			if lw.err == nil {
				lw.err = lw.bw.Flush()
			}
		}
		<-lw.lock
	}
}

// close makes every later write fail with err. It does not wait for a
// write in progress, which may be stuck on a pipe nobody reads: the
// caller unblocks that one, if it can, by closing the file.
func (lw *lineWriter) close(err error) {
	lw.closed.CompareAndSwap(nil, &err)
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
