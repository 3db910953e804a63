package jsonrpc2

import (
	"slices"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// sniff names the params members the decoder picks out for the MCP
// layers (see jsonrpcapi.Meta). They are MCP's, spelled here rather than
// handed down by package protocol at start-up, so that the decoder works
// the same whichever of ferry's packages a program imports; a test checks
// them against protocol's constants.
var sniff = jsonrpcapi.SniffNames{Meta: "_meta", ProgressToken: "progressToken",
	ProtocolVersion: "io.modelcontextprotocol/protocolVersion", Name: "name", Arguments: "arguments",
	ResultType: "resultType", IsError: "isError"}

// mcpMethods is every method name of package protocol (a test checks
// that none is missing), for the decoder to intern.
var mcpMethods = []string{
	"initialize", "ping", "server/discover", "tools/list", "tools/call",
	"resources/list", "resources/read", "resources/templates/list",
	"resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
	"completion/complete", "logging/setLevel", "subscriptions/listen",
	"sampling/createMessage", "elicitation/create", "roots/list",
	"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update",
	"notifications/initialized", "notifications/cancelled", "notifications/progress",
	"notifications/message", "notifications/tools/list_changed",
	"notifications/resources/list_changed", "notifications/resources/updated",
	"notifications/prompts/list_changed", "notifications/roots/list_changed",
	"notifications/subscriptions/acknowledged", "notifications/elicitation/complete",
	"notifications/tasks/status", "notifications/tasks",
}

// interned holds the method names the decoder returns without
// allocating, by length; built once, only read. A method name not in it
// is a new string per message.
var interned = internTable(mcpMethods)

// internTable returns names by length, each once.
func internTable(names []string) [][]string {
	var t [][]string
	for _, n := range names {
		for len(t) <= len(n) {
			t = append(t, nil)
		}
		if !slices.Contains(t[len(n)], n) {
			t[len(n)] = append(t[len(n)], n)
		}
	}
	return t
}

// internMethod returns the interned string equal to b, or "" when there
// is none.
func internMethod(b []byte) string {
	if len(b) >= len(interned) {
		return ""
	}
	for _, n := range interned[len(b)] {
		if string(b) == n {
			return n
		}
	}
	return ""
}
