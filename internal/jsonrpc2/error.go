package jsonrpc2

import (
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// The error codes JSON-RPC 2.0 defines. Protocols on top of JSON-RPC
// define their own (package protocol has MCP's).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. It is both what a handler returns to
// send a specific error code and what a call returns when the peer answered
// with an error.
type Error struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    jsontext.Value `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if len(e.Data) > 0 && len(e.Data) < 512 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is lets errors.Is match two *Error values by code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// NewError returns an *Error with the given code and formatted message.
func NewError(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func errorf(code int64, format string, args ...any) *Error {
	return NewError(code, format, args...)
}

// AsError returns err as a JSON-RPC error object for the wire: an *Error in
// err's chain is used as is, anything else becomes an internal error with
// err's text.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}

// ErrClosed is the error, wrapped with the reason, of calls that were
// pending or started when a connection closed.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ErrNotSent is matched (with errors.Is) by the error of a call whose
// request never left: the connection had closed before it was written,
// or the stream's Write said so. The peer cannot have acted on it, so it
// may be sent again, on another connection; any other failure of a call
// leaves open whether the peer got the request.
var ErrNotSent = errors.New("jsonrpc: request not sent")

// notSent is err, as it reads, matching ErrNotSent too.
type notSent struct{ error }

func (e notSent) Is(target error) bool { return target == ErrNotSent }
func (e notSent) Unwrap() error        { return e.error }

// DecodeError is returned by [Decode] for a message that cannot be
// accepted. When the message's id could be read, ID holds it so that the
// error can be reported to the sender.
type DecodeError struct {
	ID  ID
	Err *Error

	// request is set when the message had a "method" member: it was a
	// request or a notification, not a response to one of our calls, even
	// if its id is the id of one of them (each side numbers its own
	// requests).
	request bool
}

func (e *DecodeError) Error() string { return e.Err.Message }
func (e *DecodeError) Unwrap() error { return e.Err }
