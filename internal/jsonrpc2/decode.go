package jsonrpc2

import (
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"

	"github.com/go-json-experiment/json/jsontext"
)

// Decode parses one JSON-RPC message from data in a single pass. The
// returned message aliases data, which the caller must not modify
// afterwards.
//
// Decoding is strict: member names are matched case-sensitively, duplicate
// member names are rejected at every level, strings must be valid UTF-8,
// nesting is bounded by lim.MaxDepth and size by lim.MaxSize. Params and
// Result are validated but kept raw; the method, the id and the well-known
// _meta members of params are picked out on the way.
//
// A message that cannot be accepted gives a *[DecodeError] carrying the
// JSON-RPC error to report, and the message's id when it could be read.
func Decode(data []byte, lim Limits) (*Message, error) {
	m := new(Message)
	if err := decodeInto(m, data, lim); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeInto(m *Message, data []byte, lim Limits) error {
	tooBig := len(data) > lim.maxSize()
	s := scanner{data: data, maxDepth: lim.maxDepth()}
	i := s.skipSpace(0)
	if i >= len(data) || data[i] != '{' {
		if tooBig {
			return tooLarge(len(data), lim.maxSize())
		}
		if i < len(data) && data[i] == '[' {
			// Batches were removed in 2025-06-18 and never used by MCP
			// peers in practice; refuse them plainly.
			return &DecodeError{Err: errorf(CodeInvalidRequest, "JSON-RPC batches are not supported")}
		}
		if err := valid(data, lim.maxDepth()); err != nil {
			return &DecodeError{Err: AsError(err)}
		}
		return &DecodeError{Err: errorf(CodeInvalidRequest, "a JSON-RPC message must be an object")}
	}
	var (
		version, idRaw, method, params, result, errRaw []byte
		hasID                                          bool
	)
	// params is visited as it is validated, to pick out its _meta, and so
	// is result, for its resultType and isError.
	visitParams := func(name []byte, escaped bool, vs, ve int) error {
		return sniffParams(&s, name, escaped, vs, ve, &m.meta)
	}
	visitResult := func(name []byte, escaped bool, vs, ve int) error {
		switch {
		case isName(name, escaped, sniff.ResultType):
			m.meta.ResultType = data[vs:ve]
		case isName(name, escaped, sniff.IsError):
			m.meta.IsError = data[vs:ve]
		}
		return nil
	}
	end, err := s.objectWith(i, 1, func(name []byte, escaped bool, start, end int) error {
		v := data[start:end]
		if escaped {
			name = unescapeName(name)
		}
		switch string(name) {
		case "jsonrpc":
			version = v
		case "id":
			idRaw, hasID = v, true
		case "method":
			method = v
		case "params":
			params = v
		case "result":
			result = v
		case "error":
			errRaw = v
		}
		return nil
	}, inner{"params", visitParams}, inner{"result", visitResult})
	// fail returns the error for this message, with its id when the id
	// could be read, so that the sender can be told (or, for a response,
	// the call it answers can fail instead of waiting forever).
	fail := func(e *Error) error {
		de := &DecodeError{Err: e, request: method != nil}
		if hasID {
			de.ID, _ = parseID(idRaw)
		}
		return de
	}
	if tooBig {
		return fail(tooLarge(len(data), lim.maxSize()).Err)
	}
	if err != nil {
		return fail(AsError(err))
	}
	if i = s.skipSpace(end); i != len(data) {
		return fail(s.syntaxErr(i, "data after the message"))
	}
	m.Size = len(data)

	if hasID {
		if m.ID, err = parseID(idRaw); err != nil {
			return &DecodeError{Err: AsError(err), request: method != nil}
		}
	}
	if string(version) != `"2.0"` {
		return fail(errorf(CodeInvalidRequest, `"jsonrpc" must be "2.0"`))
	}
	switch {
	case method != nil:
		if result != nil || errRaw != nil {
			return fail(errorf(CodeInvalidRequest, "a request must not carry a result or an error"))
		}
		if method[0] != '"' {
			return fail(errorf(CodeInvalidRequest, `"method" must be a string`))
		}
		if m.Method = internMethod(method[1 : len(method)-1]); m.Method == "" {
			if m.Method, err = unquote(method); err != nil || m.Method == "" {
				return fail(errorf(CodeInvalidRequest, `"method" must be a non-empty string`))
			}
		}
		if hasID && !m.ID.IsValid() {
			return fail(errorf(CodeInvalidRequest, "a request id must not be null"))
		}
		if params != nil {
			if params[0] != '{' && params[0] != '[' {
				return fail(errorf(CodeInvalidRequest, `"params" must be an object or an array`))
			}
			m.Params = params
		}
		return nil
	case result != nil && errRaw != nil:
		return fail(errorf(CodeInvalidRequest, "a response must not carry both result and error"))
	case result != nil:
		if !m.ID.IsValid() {
			return fail(errorf(CodeInvalidRequest, "a result response needs an id"))
		}
		m.Result = result
	case errRaw != nil:
		e, err := decodeErrorObject(&s, errRaw)
		if err != nil {
			return fail(err)
		}
		m.Error = e
	default:
		return fail(errorf(CodeInvalidRequest, "message has neither method nor result nor error"))
	}
	// A response has no params: what was sniffed there does not apply.
	// An object result's members were all seen (visitResult).
	m.meta = jsonrpcapi.Meta{ResultType: m.meta.ResultType, IsError: m.meta.IsError,
		ResultSeen: sniff.ResultType != "" && result != nil && result[0] == '{'}
	return nil
}

// unescapeName returns the value of a member name that contains escapes,
// so that "\u006dethod" is matched as "method"; a name that cannot be
// unescaped is returned as is (it then matches no known member).
func unescapeName(raw []byte) []byte {
	b := make([]byte, 0, len(raw)+2)
	b = append(append(append(b, '"'), raw...), '"')
	if u, err := jsontext.AppendUnquote(nil, b); err == nil {
		return u
	}
	return raw
}

// sniffParams sees one member of a params object and records those named
// in sniff. The Meta member was already validated (and is small), so only
// its top level is walked again.
func sniffParams(s *scanner, name []byte, escaped bool, vs, ve int, meta *jsonrpcapi.Meta) error {
	if sniff.Meta == "" {
		return nil
	}
	data := s.data
	if escaped {
		name = unescapeName(name)
	}
	switch string(name) {
	case sniff.Meta:
	case sniff.Name:
		meta.Name = data[vs:ve]
		return nil
	case sniff.Arguments:
		meta.Arguments = data[vs:ve]
		return nil
	default:
		meta.Extra = true
		return nil
	}
	if data[vs] != '{' {
		return nil
	}
	meta.Raw = data[vs:ve]
	_, err := s.object(vs, 0, func(name []byte, escaped bool, vs, ve int) error {
		if escaped {
			name = unescapeName(name)
		}
		switch string(name) {
		case sniff.ProgressToken:
			meta.ProgressToken = data[vs:ve]
		case sniff.ProtocolVersion:
			if data[vs] == '"' {
				v, err := unquote(data[vs:ve])
				if err != nil {
					return errorf(CodeInvalidParams, "invalid %s in %s: %v", sniff.ProtocolVersion, sniff.Meta, err)
				}
				meta.ProtocolVersion = v
			}
		}
		return nil
	})
	return err
}

func decodeErrorObject(s *scanner, raw []byte) (*Error, *Error) {
	if raw[0] != '{' {
		return nil, errorf(CodeInvalidRequest, `"error" must be an object`)
	}
	e := new(Error)
	var code, msg []byte
	sub := scanner{data: raw, maxDepth: s.maxDepth}
	_, err := sub.object(0, 0, func(name []byte, escaped bool, vs, ve int) error {
		if escaped {
			name = unescapeName(name)
		}
		switch string(name) {
		case "code":
			code = raw[vs:ve]
		case "message":
			msg = raw[vs:ve]
		case "data":
			e.Data = raw[vs:ve]
		}
		return nil
	})
	if err != nil {
		return nil, AsError(err)
	}
	if code == nil {
		return nil, errorf(CodeInvalidRequest, "error object without a code")
	}
	n, perr := parseID(code)
	c, isInt := n.Int64()
	if perr != nil || !isInt {
		return nil, errorf(CodeInvalidRequest, "error code must be an integer")
	}
	e.Code = c
	if msg != nil && msg[0] == '"' {
		e.Message, _ = unquote(msg)
	}
	return e, nil
}
