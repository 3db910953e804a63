package jsonrpc

import "context"

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
