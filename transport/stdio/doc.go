// Package stdio carries MCP over a child process's standard streams: one
// JSON-RPC message per line of UTF-8 text, as the stdio transport of the
// MCP specification defines it.
//
// A server reads its requests from stdin and answers on stdout with
// [ServerStream]; a client launches the server as a subprocess and talks
// to it with [Command.Connect]. Both sides share one framing: lines are
// read without an unbounded buffer (a line over [jsonrpc.Limits] is read
// through, discarded and reported as a *[jsonrpc.DecodeError]), CRLF line
// ends and empty lines are tolerated, and concurrent writers are coalesced
// into as few write system calls as possible.
package stdio
