// Package ssewire reads and writes the server-sent events wire format
// (text/event-stream) that ferry's HTTP transports and the agent's model
// clients use: [Event], [AppendEvent], [AppendComment] and a bounded
// [Reader].
package ssewire
