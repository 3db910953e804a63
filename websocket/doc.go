// Package websocket serves and reaches MCP servers over WebSocket, in both
// protocol eras: each JSON-RPC message is one text message of a
// connection that negotiated the "mcp" subprotocol, as the TypeScript
// SDK's WebSocketClientTransport does. A connection is served like a stdio
// pipe: a client that sends initialize gets a legacy session for the
// connection's lifetime; stateless (2026-07-28) requests carry their own
// _meta, and subscriptions/listen streams notifications on the same
// connection.
//
// [Handler] is the server side, an [http.Handler] that upgrades; it
// applies the same Origin and Host checks as the Streamable HTTP handler
// (browsers let any page open a WebSocket to localhost), bounds message
// sizes and connections, and closes every connection on [Handler.Close].
// [Transport] is the client side, for ws:// and wss:// URLs.
//
// The bounds of a [Handler] ([Options]), each shared among callers so
// that one client (the remote address, or the identity Options.Caller
// names) cannot take what every other needs:
//
//   - MaxConnections (default 10,000): connections at once, held exactly
//     however many upgrades run at once; beyond it, 503.
//   - MaxConnectionsPerCaller (default half of MaxConnections): one
//     caller's connections; beyond it, 503.
//   - MaxMessageBytes (default 16 MiB): one message; a larger one gets an
//     error answer, one 8 times larger ends the connection.
//   - MaxReadMemory (default 16 times MaxMessageBytes, 256 MiB): the
//     messages being read at once, one caller's at most half; a message
//     beyond it gets an error answer ("server busy").
//   - MessageTimeout (default 60 s): a message begun and not finished in
//     time ends the connection, and its memory is released.
//   - IdleTimeout (default 30 min): a connection with no message either
//     way and no request of the client unanswered is closed.
//   - KeepAlive (default 30 s): a peer that does not answer a ping within
//     an interval is dropped.
//
// The package is built on github.com/coder/websocket, which only this
// package links: programs that do not import it do not carry it. It sits
// beside transport/ rather than in it so that the core transports
// (transport/...) link no WebSocket library.
package websocket
