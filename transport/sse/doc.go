// Package sse implements the client ([Transport]) of the HTTP with SSE
// transport of MCP revision 2024-11-05. Its server is package
// transport/ssehandler, apart so that a client links no server.
//
// The transport is deprecated since revision 2025-03-26 in favour of
// Streamable HTTP, but older clients and servers still speak it: "Servers
// wanting to support older clients should: Continue to host both the SSE
// and POST endpoints of the old transport, alongside the new 'MCP
// endpoint'", and a client falls back to it when a POST to the server's
// URL fails (the Streamable HTTP client does so with a [Transport]).
//
// How it works (2024-11-05, "HTTP with SSE"):
//
//   - The client opens an event stream with GET on the SSE endpoint
//     (by convention /sse). "When a client connects, the server MUST
//     send an endpoint event containing a URI for the client to use for
//     sending messages", such as /message?sessionId=….
//   - "All subsequent client messages MUST be sent as HTTP POST requests
//     to this endpoint"; the server accepts each with 202 Accepted.
//   - "Server messages are sent as SSE message events, with the message
//     content encoded as JSON in the event data": responses,
//     notifications and server-to-client requests alike.
//   - The session lasts as long as the event stream: closing it ends the
//     session, and cancels what the server was doing for it.
//
// A session is a legacy MCP session (initialize first), whatever revision
// the two sides negotiate on it.
package sse
