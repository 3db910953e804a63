package streamable

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// nameField is the params member that Mcp-Name mirrors, per method.
func nameField(method string) string {
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

func mismatch(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: protocol.CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
}

// checkHeaders validates the request metadata headers of a stateless POST
// against its body: "Servers that process the request body MUST reject
// requests where the values specified in the headers do not match the
// corresponding values in the request body."
func (h *Handler) checkHeaders(r *http.Request, m *jsonrpc.Message) *jsonrpc.Error {
	if !m.IsRequest() {
		return nil // header requirements for notification POSTs are not defined
	}
	mh := strings.TrimSpace(r.Header.Get(headerMethod))
	if mh == "" {
		return mismatch("missing Mcp-Method header")
	}
	if mh != m.Method {
		return mismatch("Mcp-Method header value %q does not match body value %q", mh, m.Method)
	}
	field := nameField(m.Method)
	if field == "" {
		return nil
	}
	raw, ok := r.Header[headerName]
	if !ok || len(raw) == 0 {
		return mismatch("missing Mcp-Name header")
	}
	hname, err := mcpheader.Decode(strings.TrimSpace(raw[0]))
	if err != nil {
		return mismatch("Mcp-Name header: %v", err)
	}
	body, found, _ := jsonrpcapi.Member(m.Params, field)
	var bname string
	if found && len(body) > 0 && body[0] == '"' {
		bname, _ = jsonrpcapi.Unquote(body)
	}
	if hname != bname {
		return mismatch("Mcp-Name header value %q does not match body value %q", hname, bname)
	}
	if m.Method == protocol.MethodToolsCall {
		return h.checkParamHeaders(r, bname, m.Params)
	}
	return nil
}

func (h *Handler) checkParamHeaders(r *http.Request, tool string, params jsontext.Value) *jsonrpc.Error {
	hps, ok := srv.ToolHeaders(h.server, tool)
	if !ok || len(hps) == 0 {
		// An unknown tool the server answers itself; a tool that mirrors
		// nothing has nothing to check.
		return nil
	}
	args, _, _ := jsonrpcapi.Member(params, "arguments")
	for _, hp := range hps {
		value, present := mcpheader.Lookup(args, hp)
		hv, sent := r.Header[hp.Header]
		if !present {
			continue // "Server MUST NOT expect the header"
		}
		if !sent || len(hv) == 0 {
			return mismatch("missing %s header for argument %s", hp.Header, strings.Join(hp.Path, "."))
		}
		got, err := mcpheader.Decode(strings.Trim(hv[0], " \t"))
		if err != nil {
			return mismatch("%s header: %v", hp.Header, err)
		}
		if !mcpheader.Matches(got, value) {
			return mismatch("%s header value %q does not match body value %s", hp.Header, got, value)
		}
	}
	return nil
}
