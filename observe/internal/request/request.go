// Package request holds what observe's parts (logs, metrics, tracing)
// read of a request the same way: its target, its outcome, its era.
package request

import (
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// The outcomes of a request.
const (
	OK            = "ok"
	ToolError     = "tool_error"
	InputRequired = "input_required"
	Error         = "error"
)

// Outcome classifies a request's result. A tools/call result passed on
// undecoded (a jsontext.Value, as a gateway forwards it and a client's
// middleware sees it) is a tool error as res.IsError says: whoever made
// it found its isError on the way, and a 64 KiB result is not walked
// again here.
func Outcome(res intercept.Result, err error) string {
	if err != nil {
		return Error
	}
	if res.IsError {
		return ToolError
	}
	switch r := res.Value.(type) {
	case *protocol.CallToolResult:
		if r.IsError {
			return ToolError
		}
	case *protocol.InputRequiredResult:
		return InputRequired
	}
	return OK
}

// Target is the name (tools/call, prompts/get) or the URI (resources/*)
// a request names, as the server decodes it.
func Target(req *intercept.Request) (name, uri string) {
	switch req.Method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return req.Name(), ""
	case protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		return "", req.Name()
	}
	return "", ""
}

// Tool is the tool (or prompt) a request names, for the metrics.
func Tool(method, target string) string {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return target
	}
	return ""
}

// Era is the protocol era of a request: "stateless" or "legacy".
func Era(req *intercept.Request) string {
	if req.Stateless {
		return "stateless"
	}
	return "legacy"
}

// SessionID is the legacy session a served request belongs to, "" when
// none.
func SessionID(req *server.Request) string {
	if req == nil || req.Session == nil {
		return ""
	}
	return req.Session.ID
}
