// Package jsonrpc2 is ferry's JSON-RPC 2.0 engine (package jsonrpc
// documents it for users, who see it through that package's aliases):
// the connection and its scheduler, the strict decoder, the encoder and
// the stream capabilities. Beyond what package jsonrpc gives users, it
// has the plain functions ferry's own transports and MCP layers use
// (engine.go): the Conn's serve and call hooks, the wire encoder, member
// lookup without decoding.
package jsonrpc2
