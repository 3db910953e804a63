// Package jsonrpc is the JSON-RPC 2.0 layer under every transport,
// client and server of the MCP toolkit: its messages, ids and errors, and
// the streams that carry them.
//
// A [Message] is one request, notification or response; [Decode] reads
// one strictly (duplicate member names, invalid UTF-8, nesting or size
// beyond [Limits] are refused with the error to send back) and
// [AppendMessage] writes one. A [Stream] carries messages between two
// peers; each transport (stdio, in-memory, Streamable HTTP, HTTP+SSE)
// provides one. The connection that runs the protocol over a stream
// (numbering and matching calls, handing incoming requests to handlers,
// turning a cancelled context into a cancellation sent to the peer) is
// ferry's internal engine, run by package server and package client: it
// is no part of this package, so that it can change without a breaking
// release.
//
// Streams may have optional capabilities that let the connection take
// faster paths (answers handed straight back, answers batched, memory reused);
// the capability interfaces ([Batcher], [Recycler], [Requester] and the
// rest) are all of them, with [As] to find them through wrappers and
// [Observe] to wrap a stream without losing any.
//
// How the connection schedules its goroutines, who owns the memory a message was
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
