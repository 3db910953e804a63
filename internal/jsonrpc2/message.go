package jsonrpc2

import (
	"context"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"

	"github.com/go-json-experiment/json/jsontext"
)

// Message is one JSON-RPC 2.0 message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID and Result or Error).
//
// A decoded Message keeps Params and Result as the raw JSON that arrived;
// they alias the buffer given to [Decode] and are decoded only by whoever
// handles them, into their own types. For a message being sent, Body, when
// not nil, is marshalled in place of Params (requests and notifications) or
// Result (responses), straight into the transport's buffer.
type Message struct {
	ID     ID
	Method string
	Params jsontext.Value
	Result jsontext.Value
	Error  *Error
	Body   any

	// Size is the size of the message on the wire, when known.
	Size int

	// Lent is set by the handler of a request to which the message was
	// only lent, as the slice given to an io.Writer's Write is: once the
	// reply has been encoded, nothing it kept or started refers to the
	// message's memory (Params, strings decoded from them). The transport
	// that read the message may then read another into the same memory.
	// Transports that cannot tell when a reply has been encoded ignore it.
	Lent bool
	// Buffer is the memory a stream read the message into, when the
	// stream can reuse it: see [Recycler]. Nil otherwise.
	Buffer []byte

	// Context, set by a transport on an incoming message, is the context
	// of the exchange that carried it (an HTTP POST), for the values it
	// holds: what an HTTP middleware put there, such as the caller's
	// identity, for the handler to see. Its cancellation and deadline do
	// not apply to the message. Nil for messages that came on a stream of
	// no exchanges (stdio).
	Context context.Context

	// meta is what the decoder picked out of Params for the layers above
	// (jsonrpcapi.Meta), by the names they gave it.
	meta jsonrpcapi.Meta
}

// IsRequest reports whether m is a request.
func (m *Message) IsRequest() bool { return m.Method != "" && m.ID.IsValid() }

// IsNotification reports whether m is a notification.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.ID.IsValid() }

// IsResponse reports whether m is a response (result or error).
func (m *Message) IsResponse() bool { return m.Method == "" }

// Limits bound what a decoder accepts.
type Limits struct {
	// MaxSize is the largest message accepted, in bytes. Zero means
	// [DefaultMaxSize].
	MaxSize int
	// MaxDepth is the deepest nesting of arrays and objects accepted. Zero
	// means [DefaultMaxDepth].
	MaxDepth int
}

const (
	// DefaultMaxSize is the default bound on one message: 16 MiB.
	DefaultMaxSize = 16 << 20
	// DefaultMaxDepth is the default bound on JSON nesting.
	DefaultMaxDepth = 128
)

func (l Limits) maxSize() int {
	if l.MaxSize > 0 {
		return l.MaxSize
	}
	return DefaultMaxSize
}

func (l Limits) maxDepth() int {
	if l.MaxDepth > 0 {
		return l.MaxDepth
	}
	return DefaultMaxDepth
}

// tooLarge is the error for a message of n bytes over the limit max.
func tooLarge(n, max int) *DecodeError {
	return &DecodeError{Err: errorf(CodeInvalidRequest,
		"message of %d bytes exceeds the limit of %d bytes", n, max)}
}
