package gateway

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// srv is what package server gives ferry's transports and middleware.
var srv = serverapi.Get[*server.Server, *server.Session, *server.Request]()

// toolCall reads the params of a tools/call without copying or decoding
// its arguments, which go upstream as they came: on the hot path of a
// gateway, a 64 KiB argument is neither decoded nor copied here. Nor is
// it walked again: the JSON-RPC decoder picked the name and the arguments
// out of the params while it validated them (serverapi's Sniffed), and
// the params are walked only for the members it leaves (a stateless
// retry's), or when it picked nothing.
func toolCall(req *server.Request) (*protocol.CallToolParams, error) {
	params := req.Params()
	p := &protocol.CallToolParams{}
	sn := srv.Sniffed(req)
	raw, walked := serverapi.Name(sn, params)
	args := sn.Arguments
	if walked {
		args, _, _ = jsonrpc2.Member(params, "arguments")
	}
	if len(raw) == 0 || raw[0] != '"' {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: tools/call needs a string name")
	}
	var err error
	if p.Name, err = jsonrpc2.Unquote(raw); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tool name: %v", err)
	}
	if args != nil && string(args) != "null" {
		if len(args) == 0 || args[0] != '{' {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: arguments must be an object")
		}
		p.Arguments = args
	}
	p.Meta = forwardMeta(req)
	// Without members beside _meta, name and arguments (sn.Extra), a
	// stateless request is no retry.
	if req.Stateless() && (sn.Extra || walked) {
		if err := mrtrParams(params, &p.MRTRParams); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// mrtrParams reads the members of a retried stateless request.
func mrtrParams(params jsontext.Value, out *protocol.MRTRParams) error {
	if raw, ok, _ := jsonrpc2.Member(params, "requestState"); ok && string(raw) != "null" {
		s, err := jsonrpc2.Unquote(raw)
		if err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState: %v", err)
		}
		out.RequestState = s
	}
	if raw, ok, _ := jsonrpc2.Member(params, "inputResponses"); ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &out.InputResponses); err != nil {
			return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid inputResponses: %v", err)
		}
	}
	return nil
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
