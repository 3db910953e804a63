package gateway

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// toolCall reads the params of a tools/call as the server decoded them
// ([server.Request.ToolCall]), without copying or decoding its arguments,
// which go upstream as they came: on the hot path of a gateway, a 64 KiB
// argument is neither decoded nor copied here, nor walked again (the
// JSON-RPC decoder picked the name and the arguments out of the params
// while it validated them).
func toolCall(req *server.Request) (*protocol.CallToolParams, error) {
	p, err := req.ToolCall()
	switch {
	case err != nil:
		return nil, err
	case p.Name == "":
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: tools/call needs a string name")
	case string(p.Arguments) == "null":
		p.Arguments = nil
	case p.Arguments != nil && p.Arguments[0] != '{':
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: arguments must be an object")
	}
	// The gateway answers a legacy task request itself (taskWanted), and
	// only a stateless request is retried.
	p.Task = nil
	if !req.Stateless() {
		p.MRTRParams = protocol.MRTRParams{}
	}
	p.Meta = forwardMeta(req)
	return &p, nil
}

// forwardMeta is the part of a request's _meta that goes upstream (see
// passMeta); it decodes the _meta only when it holds such a member.
func forwardMeta(req *server.Request) protocol.Meta {
	if len(req.RawMeta) == 0 || !ownMembers(req.RawMeta) {
		return nil
	}
	return passMeta(req.Meta())
}

// ownMembers reports whether a _meta object has members beside those the
// protocol puts there.
func ownMembers(meta jsontext.Value) bool {
	d := jsontext.NewDecoder(bytes.NewReader(meta))
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if k := tok.String(); k != protocol.MetaProgressToken && !strings.HasPrefix(k, "io.modelcontextprotocol/") {
			return true
		}
		if d.SkipValue() != nil {
			return false
		}
	}
	return false
}
