package jsonrpc

import (
	"context"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
)

// AppendMessage appends the wire form of m (without a trailing newline) to
// b. A Body is marshalled directly after the envelope; raw Params and Result
// are copied as they are.
func AppendMessage(b []byte, m *Message) ([]byte, error) {
	return jsonrpc2.AppendMessage(b, m)
}

// As finds capability C (one of the Stream capability interfaces) of stream s,
// as http.ResponseController finds a ResponseWriter's: s itself, or for a
// capability that carries no message, the stream under any number of
// [Wrapper]s. It reports false when no stream has it; the caller then
// takes the path the capability's doc describes for that case.
func As[C any](s Stream) (C, bool) {
	return jsonrpc2.As[C](s)
}

// AsError returns err as a JSON-RPC error object for the wire: an *Error in
// err's chain is used as is, anything else becomes an internal error with
// err's text.
func AsError(err error) *Error {
	return jsonrpc2.AsError(err)
}

// Batcher is a capability that carries messages: streams that read ahead
// and write through a buffer (stdio). A connection that answers a request
// on the goroutine that reads uses it as a sequential server would: while the
// next message is already buffered, the answer stays in the write buffer,
// to leave in one write with the answers that follow, and the stream
// flushes it before its Read blocks. Only the goroutine that calls Read
// calls Buffered and WriteBuffered. Without it, every answer is written at
// once.
type Batcher = jsonrpc2.Batcher

// The error codes JSON-RPC 2.0 defines. Protocols on top of JSON-RPC
// define their own (package protocol has MCP's).
const (
	CodeParseError     = jsonrpc2.CodeParseError
	CodeInvalidRequest = jsonrpc2.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc2.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc2.CodeInvalidParams
	CodeInternalError  = jsonrpc2.CodeInternalError
)

// Decode parses one JSON-RPC message from data in a single pass. The
// returned message aliases data, which the caller must not modify
// afterwards.
//
// Decoding is strict: member names are matched case-sensitively, duplicate
// member names are rejected at every level, strings must be valid UTF-8,
// nesting is bounded by lim.MaxDepth and size by lim.MaxSize. Params and
// Result are validated but kept raw; the method, the id and the well-known
// _meta members of params are picked out on the way.
//
// A message that cannot be accepted gives a *[DecodeError] carrying the
// JSON-RPC error to report, and the message's id when it could be read.
func Decode(data []byte, lim Limits) (*Message, error) {
	return jsonrpc2.Decode(data, lim)
}

// DecodeError is returned by [Decode] for a message that cannot be
// accepted. When the message's id could be read, ID holds it so that the
// error can be reported to the sender.
type DecodeError = jsonrpc2.DecodeError

// DefaultMaxDepth is the default bound on JSON nesting.
const DefaultMaxDepth = jsonrpc2.DefaultMaxDepth

// DefaultMaxSize is the default bound on one message: 16 MiB.
const DefaultMaxSize = jsonrpc2.DefaultMaxSize

// ErrClosed is the error, wrapped with the reason, of calls that were
// pending or started when a connection closed.
var ErrClosed = jsonrpc2.ErrClosed

// ErrNotSent is matched (with errors.Is) by the error of a call whose
// request never left: the connection had closed before it was written,
// or the stream's Write said so. The peer cannot have acted on it, so it
// may be sent again, on another connection; any other failure of a call
// leaves open whether the peer got the request.
var ErrNotSent = jsonrpc2.ErrNotSent

// ErrReadInterrupted is what Read returns when [ReadInterrupter].InterruptRead
// cut it short. The stream stays usable.
var ErrReadInterrupted = jsonrpc2.ErrReadInterrupted

// Error is a JSON-RPC error object. It is both what a handler returns to
// send a specific error code and what a call returns when the peer answered
// with an error.
type Error = jsonrpc2.Error

// HeaderMirror is implemented by streams that copy parts of a request
// into transport headers (Streamable HTTP's Mcp-Name and Mcp-Param-*):
// when MirrorsHeaders reports true, an MCP client must refuse tools whose
// header annotations it cannot mirror. Without it, nothing is mirrored.
type HeaderMirror = jsonrpc2.HeaderMirror

// ID is a JSON-RPC request id: a string or an integer, kept exactly as the
// peer sent it so that a response carries the same value back. The zero ID
// means "no id" (a notification, or an error response to an unreadable
// request). IDs are comparable and can be used as map keys.
type ID = jsonrpc2.ID

// Int64ID returns an integer ID.
func Int64ID(n int64) ID {
	return jsonrpc2.Int64ID(n)
}

// Limits bound what a decoder accepts.
type Limits = jsonrpc2.Limits

// Marshal encodes m into a new slice.
func Marshal(m *Message) ([]byte, error) {
	return jsonrpc2.Marshal(m)
}

// Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID and Result or Error).
//
// A decoded Message keeps Params and Result as the raw JSON that arrived;
// they alias the buffer given to [Decode] and are decoded only by whoever
// handles them, into their own types. For a message being sent, Body, when
// not nil, is marshalled in place of Params (requests and notifications) or
// Result (responses), straight into the transport's buffer.
type Message = jsonrpc2.Message

// NewError returns an *Error with the given code and formatted message.
func NewError(code int64, format string, args ...any) *Error {
	return jsonrpc2.NewError(code, format, args...)
}

// Observe wraps s so that o sees every message that crosses it, for
// tracing or accounting, while a connection over the wrapper takes the
// same paths as over s: the wrapper implements [Requester] and [Batcher]
// exactly when s does, by delegating to s and observing what passes, and
// it is a [Wrapper], so that [As] finds s's other capabilities.
func Observe(s Stream, o Observer) Stream {
	return jsonrpc2.Observe(s, o)
}

// Observer holds the functions an [Observe]d stream calls. Either may be
// nil. They are called on the goroutine that reads or writes, before the
// message is returned or sent, and must not block for long or keep m
// beyond the call: the message's memory may be reused once it is handled.
type Observer = jsonrpc2.Observer

// ReadInterrupter is implemented by streams whose blocked Read can be made
// to return early without ending the stream. A connection may then let a
// call over such a stream read its own answer, and interrupt that read
// when the call's deadline or context ends first. Without it, a reading goroutine reads
// every answer and hands it over.
type ReadInterrupter = jsonrpc2.ReadInterrupter

// Recycler is implemented by streams that can read messages into memory
// their users give back. Recycle takes back m.Buffer, the memory of m, a
// message the stream returned, once nothing refers to m or to anything
// decoded from it any more. It does nothing for a message whose Buffer
// is nil, as it is after the first Recycle. Without it, that memory is
// left to the garbage collector.
type Recycler = jsonrpc2.Recycler

// RequestID returns the id of the incoming request whose handler ctx
// belongs to (a server's handler, say).
func RequestID(ctx context.Context) (ID, bool) {
	return jsonrpc2.RequestID(ctx)
}

// RequestStreamCloser is implemented by streams that carry each incoming
// request's messages on a response stream of its own (a legacy Streamable
// HTTP session): CloseRequestStream ends the stream of request id while
// the request goes on, and reports whether there was one (the client
// resumes it later). Without it, a request's messages cannot be cut off.
type RequestStreamCloser = jsonrpc2.RequestStreamCloser

// Requester is a capability that carries messages: streams that carry each
// request on an exchange of its own (an HTTP POST) can hand its answer
// straight back to the caller. Request sends m and returns its answer, or
// nil when the answer (or an error made up for it) comes through Read as
// usual, for example because other messages came with it and must be seen
// first. Without it, a connection writes the request and waits for its
// answer to be read.
type Requester = jsonrpc2.Requester

// Stream carries JSON-RPC messages between two peers. Every transport
// (stdio, in-memory, HTTP) provides one; package server and package client
// run the protocol over it.
type Stream = jsonrpc2.Stream

// StringID returns a string ID.
func StringID(s string) ID {
	return jsonrpc2.StringID(s)
}

// Wrapper is implemented by a stream that wraps another, as
// http.ResponseWriter wrappers implement Unwrap for
// http.ResponseController: [As] then finds the wrapped stream's
// capabilities that carry no message. A wrapper's Read must return the
// wrapped stream's errors as they are, or wrapped with %w, so that
// [ErrReadInterrupted] and io.EOF keep their meaning.
type Wrapper = jsonrpc2.Wrapper
