// Package wiretest tests ferry's agent on the wire: its provider clients
// (agent/openai and agent/anthropic) talk to Ollama's own translation
// middleware in front of a scripted model (package fakemodel), while the
// agent drives real MCP servers: the reference servers server-memory and
// server-everything (npm, pinned in interop/node) over stdio, ferry's
// example server in the stateless era, and the 12306 stand-in.
//
// The clients are ferry's own; the official SDKs, too heavy for the
// ferry command, stay here as their reference (packages sdkopenai and
// sdkanthropic: the same translations on openai-go and
// anthropic-sdk-go). The equivalence tests send the same requests
// through both, to a recorder and to Ollama's middleware, and compare
// the JSON that arrives; and read the same streams and errors with both,
// and compare the replies.
//
// It is a module of its own, outside go.work (the Ollama module and the
// SDKs are heavy); scripts/test.sh runs it with GOWORK=off.
package wiretest
