package jsonrpc2

import (
	"context"
	"errors"
)

// This file is the whole contract between a [Conn] (and the MCP layers
// above it) and the transports below: the [Stream] every transport
// provides, the optional capabilities a stream may have to take faster or
// richer paths, the one convention for wrapping a stream ([Wrapper]), the
// one way to find a capability through wrappers ([As]), and a wrapper
// that sees every message and keeps every capability ([Observe]).
//
// A capability falls in one of two kinds, and [As] treats them apart:
//
//   - Capabilities that carry messages ([Requester], [Batcher]) must be
//     implemented by the outermost stream itself: a wrapper that let them
//     through would let messages bypass it (a trace would miss them). [As]
//     does not look through wrappers for them; a wrapper that should keep
//     them implements them by delegating, as [Observe]'s does.
//   - The others ([Recycler], [ReadInterrupter], [HeaderMirror],
//     [RequestStreamCloser]) carry no message, so [As] finds them through
//     any number of wrappers that implement [Wrapper].
//
// A stream without a capability is served by the plain Read and Write;
// each capability's doc says what it changes.

// Stream carries JSON-RPC messages between two peers. Every transport
// (stdio, in-memory, HTTP) provides one; a [Conn] runs the protocol over it.
type Stream interface {
	// Read blocks until the next message arrives. A *[DecodeError] reports
	// one message that could not be accepted; the stream stays usable.
	// Any other error ends the stream; io.EOF means the peer closed it
	// cleanly.
	Read() (*Message, error)
	// Write sends one message. It is safe for concurrent use. The message
	// must not be modified until Write returns. An error that matches
	// [ErrNotSent] says that no part of the message left; any other leaves
	// that open.
	Write(ctx context.Context, m *Message) error
	// Close releases the stream and makes a blocked Read return.
	Close() error
}

// Wrapper is implemented by a stream that wraps another, as
// http.ResponseWriter wrappers implement Unwrap for
// http.ResponseController: [As] then finds the wrapped stream's
// capabilities that carry no message. A wrapper's Read must return the
// wrapped stream's errors as they are, or wrapped with %w, so that
// [ErrReadInterrupted] and io.EOF keep their meaning.
type Wrapper interface {
	Unwrap() Stream
}

// Requester is a capability that carries messages: streams that carry each
// request on an exchange of its own (an HTTP POST) can hand its answer
// straight back to the caller. Request sends m and returns its answer, or
// nil when the answer (or an error made up for it) comes through Read as
// usual, for example because other messages came with it and must be seen
// first. Without it, a [Conn] writes the request and waits for its answer
// to be read.
type Requester interface {
	Request(ctx context.Context, m *Message) (*Message, error)
}

// Batcher is a capability that carries messages: streams that read ahead
// and write through a buffer (stdio). A [Conn] that answers a request on
// the goroutine that reads uses it as a sequential server would: while the
// next message is already buffered, the answer stays in the write buffer,
// to leave in one write with the answers that follow, and the stream
// flushes it before its Read blocks. Only the goroutine that calls Read
// calls Buffered and WriteBuffered. Without it, every answer is written at
// once.
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
// is nil, as it is after the first Recycle. Without it, that memory is
// left to the garbage collector.
type Recycler interface {
	Recycle(m *Message)
}

// ReadInterrupter is implemented by streams whose blocked Read can be made
// to return early without ending the stream. A [Conn] with
// [ConnOptions].CallerReads lets a call over such a stream read its own
// answer (see [ConnOptions]), and interrupts that read when the call's
// deadline or context ends first. Without it, a reading goroutine reads
// every answer and hands it over.
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

// HeaderMirror is implemented by streams that copy parts of a request
// into transport headers (Streamable HTTP's Mcp-Name and Mcp-Param-*):
// when MirrorsHeaders reports true, an MCP client must refuse tools whose
// header annotations it cannot mirror. Without it, nothing is mirrored.
type HeaderMirror interface {
	MirrorsHeaders() bool
}

// RequestStreamCloser is implemented by streams that carry each incoming
// request's messages on a response stream of its own (a legacy Streamable
// HTTP session): CloseRequestStream ends the stream of request id while
// the request goes on, and reports whether there was one (the client
// resumes it later). Without it, a request's messages cannot be cut off.
type RequestStreamCloser interface {
	CloseRequestStream(id ID) bool
}

// As finds capability C (one of the interfaces of this file) of stream s,
// as http.ResponseController finds a ResponseWriter's: s itself, or for a
// capability that carries no message, the stream under any number of
// [Wrapper]s. It reports false when no stream has it; the caller then
// takes the path the capability's doc describes for that case.
func As[C any](s Stream) (C, bool) {
	var zero C
	carries := false
	switch any((*C)(nil)).(type) {
	case *Requester, *Batcher:
		carries = true
	}
	for s != nil {
		if c, ok := s.(C); ok {
			return c, true
		}
		w, ok := s.(Wrapper)
		if !ok || carries {
			break
		}
		s = w.Unwrap()
	}
	return zero, false
}
