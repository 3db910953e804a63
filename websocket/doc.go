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
// The package is built on github.com/coder/websocket, which only this
// package links: programs that do not import it do not carry it. It sits
// beside transport/ rather than in it so that the core transports
// (transport/...) link no WebSocket library.
package websocket
