// Package streamwire holds what the two ends of Streamable HTTP share and
// no user needs: the header names, the params member Mcp-Name mirrors,
// and the pool of message bodies. The client (transport/streamable) and
// the handler (transport/streamablehandler) are packages of their own so
// that a client links no server; this is what sits under both.
package streamwire

import "github.com/ferrymcp/ferry/protocol"

// Header names.
const (
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderLastEventID     = "Last-Event-Id"
)

// NameField is the params member that Mcp-Name mirrors, per method.
func NameField(method string) string {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return "name"
	case protocol.MethodResourcesRead:
		return "uri"
	case protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
		// "the client MUST set the Mcp-Name header to the value of
		// params.taskId" (tasks extension, routing headers)
		return "taskId"
	}
	return ""
}
