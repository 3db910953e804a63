// Package agent is the loop that puts a language model to work on MCP
// tools: it sends the conversation and the tools of a [Toolbox] (a
// host.Host, many servers behind one list) to a [Model], runs the tool
// calls the model asks for (several at once when it asks for several),
// gives it their results, and repeats until the model answers or a limit
// is reached (steps, time, tokens).
//
// What happens is reported as [Event]s (text as it streams, tool calls
// started and finished with their duration, progress, usage), so that a
// terminal, a JSON printer or a program can show it. A [Conversation] can
// be saved and loaded as JSON.
//
// The agent also answers what MCP servers ask of a host: [Agent.Sample]
// answers a server's sampling request with the agent's own model, subject
// to the same approval [Policy] as tool calls.
//
// Models come from the provider packages (agent/openai for OpenAI Chat
// Completions and every compatible endpoint, agent/anthropic for Anthropic
// Messages), each a small client of ferry's own, held to the official
// SDKs by the wire tests (agent/wiretest); agent/providers picks one from
// a "PROVIDER/MODEL" name. A program that imports only ferry's client or
// server gets none of this: the agent is a module of its own.
package agent
