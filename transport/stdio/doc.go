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
//
// # The server's environment
//
// A server does not inherit the client's environment: it gets only the
// variables a program needs to run (HOME, LOGNAME, PATH, SHELL, TERM and
// USER; on Windows APPDATA, HOMEDRIVE, HOMEPATH, LOCALAPPDATA, PATH,
// PROCESSOR_ARCHITECTURE, PROGRAMFILES, SYSTEMDRIVE, SYSTEMROOT, TEMP,
// USERNAME and USERPROFILE), as the TypeScript SDK's stdio client passes
// them, plus [Command.Env]. The client's environment often holds secrets
// that are not the server's (API keys of model providers, OTLP headers, a
// gateway's own tokens), and a server is code of someone else's, which
// may show its environment to whoever calls it. A variable a server needs
// goes in [Command.Env]; [Command.InheritEnv] passes everything instead.
//
// The environment is not the only way to a secret: a server runs as the
// same user as its client and can read the files the client can.
package stdio
