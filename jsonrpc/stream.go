package jsonrpc

import (
	"context"
	"errors"
)

// Stream carries JSON-RPC messages between two peers. Every transport
// (stdio, in-memory, HTTP) provides one; a [Conn] runs the protocol over it.
type Stream interface {
	// Read blocks until the next message arrives. A *[DecodeError] reports
	// one message that could not be accepted; the stream stays usable.
	// Any other error ends the stream; io.EOF means the peer closed it
	// cleanly.
	Read() (*Message, error)
	// Write sends one message. It is safe for concurrent use. The message
	// must not be modified until Write returns.
	Write(ctx context.Context, m *Message) error
	// Close releases the stream and makes a blocked Read return.
	Close() error
}

// Requester is implemented by streams that carry each request on an
// exchange of its own (an HTTP POST) and can hand its answer straight back
// to the caller. Request sends m and returns its answer, or nil when the
// answer (or an error made up for it) comes through Read as usual, for
// example because other messages came with it and must be seen first.
type Requester interface {
	Request(ctx context.Context, m *Message) (*Message, error)
}

// Batcher is implemented by streams that read ahead and write through a
// buffer (stdio). A [Conn] that answers a request on the goroutine that
// reads uses it as a sequential server would: while the next message is
// already buffered, the answer stays in the write buffer, to leave in one
// write with the answers that follow, and the stream flushes it before
// its Read blocks. Only the goroutine that calls Read calls Buffered and
// WriteBuffered.
type Batcher interface {
	// Buffered reports whether a whole message is buffered, so that Read
	// returns without waiting for input.
	Buffered() bool
	// WriteBuffered is Write, except that m may stay buffered until the
	// next Write, or until Read is about to wait for input.
	WriteBuffered(ctx context.Context, m *Message) error
}

// Recycler is implemented by streams that can read messages into memory
// their users give back. Recycle takes back m.Buffer, the memory of m, a
// message the stream returned, once nothing refers to m or to anything
// decoded from it any more. It does nothing for a message whose Buffer
// is nil, as it is after the first Recycle.
type Recycler interface {
	Recycle(m *Message)
}

// ReadInterrupter is implemented by streams whose blocked Read can be made
// to return early without ending the stream. A [Conn] with
// [ConnOptions].CallerReads lets a call over such a stream read its own
// answer (see [ConnOptions]), and interrupts that read when the call's
// deadline or context ends first.
type ReadInterrupter interface {
	// InterruptRead makes a Read in progress, or else the next Read,
	// return [ErrReadInterrupted]. Nothing is lost: the Read after that
	// goes on where the interrupted one stopped. It is safe to call from
	// any goroutine, at any time.
	InterruptRead()
}

// ErrReadInterrupted is what Read returns when [ReadInterrupter].InterruptRead
// cut it short. The stream stays usable.
var ErrReadInterrupted = errors.New("jsonrpc: read interrupted")
