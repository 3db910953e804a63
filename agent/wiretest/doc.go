// Package wiretest tests ferry's agent on the wire: the official OpenAI and
// Anthropic SDKs (through agent/openai and agent/anthropic) talk to
// Ollama's own translation middleware in front of a scripted model
// (package fakemodel), while the agent drives real MCP servers: the
// reference servers server-memory and server-everything (npm, pinned in
// interop/node) over stdio, ferry's example server in the stateless era,
// and the 12306 stand-in.
//
// It is a module of its own, outside go.work (the Ollama module is
// heavy); scripts/test.sh runs it with GOWORK=off.
package wiretest
