// Package jsonrpc is ferry's JSON-RPC 2.0 engine: the one under every
// transport, client and server of the MCP toolkit.
//
// A [Message] is one request, notification or response; [Decode] reads
// one strictly (duplicate member names, invalid UTF-8, nesting or size
// beyond [Limits] are refused with the error to send back) and
// [AppendMessage] writes one. A [Stream] carries messages between two
// peers; each transport (stdio, in-memory, Streamable HTTP, HTTP+SSE)
// provides one. A [Conn] runs the protocol over a stream: it numbers and
// matches calls ([Conn.Call]), hands incoming requests and notifications
// to a [Handler], and turns a cancelled context into a cancellation sent
// to the peer.
//
// Streams may have optional capabilities that let a Conn take faster
// paths (answers handed straight back, answers batched, memory reused);
// the capability interfaces ([Batcher], [Recycler], [Requester] and the
// rest) are all of them, with [As] to find them through wrappers and
// [Observe] to wrap a stream without losing any.
//
// How a Conn schedules its goroutines, who owns the memory a message was
// read into, and the seams ferry's transports use are described in
// DESIGN.md at the root of the repository. The engine itself is
// ferry's internal package jsonrpc2: the names of this package are
// aliases of its, so that its internals can change without a breaking
// release.
//
// Most programs never use this package directly: package server and
// package client build on it. It is for writing transports, and for
// reading the [Error] a call returns.
package jsonrpc
