package client

import (
	"strconv"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
)

// tools/call is the request a client sends most, often with large
// arguments: it is encoded without reflection (jsonrpc.Appender), the
// arguments through jsonfast when their type allows.

// AppendJSON appends the request's params.
func (w *callToolWire) AppendJSON(b []byte) ([]byte, error) {
	var err error
	b = append(b, '{')
	if !w.Meta.IsZero() {
		b = append(b, `"_meta":`...)
		if b, err = w.Meta.appendJSON(b); err != nil {
			return b, err
		}
		b = append(b, ',')
	}
	b = append(b, `"name":`...)
	if b, err = jsonfast.AppendQuote(b, w.Name); err != nil {
		return b, err
	}
	if w.Arguments != nil {
		b = append(b, `,"arguments":`...)
		if b, err = appendArgs(b, w.Arguments); err != nil {
			return b, err
		}
	}
	if len(w.InputResponses) > 0 {
		b = append(b, `,"inputResponses":`...)
		if b, err = jsonfast.AppendMarshal(b, w.InputResponses); err != nil {
			return b, err
		}
	}
	if w.RequestState != "" {
		b = append(b, `,"requestState":`...)
		if b, err = jsonfast.AppendQuote(b, w.RequestState); err != nil {
			return b, err
		}
	}
	if w.Task != nil {
		b = append(b, `,"task":`...)
		if b, err = jsonfast.AppendMarshal(b, w.Task); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendArgs appends tool arguments: raw JSON as it is, flat structs and
// maps of scalars without reflection-based marshalling, anything else
// through json.
func appendArgs(b []byte, args any) ([]byte, error) {
	switch v := args.(type) {
	case jsontext.Value:
		return append(b, v...), nil
	case map[string]any:
		if out, ok := appendScalarMap(b, v); ok {
			return out, nil
		}
	case map[string]string:
		out := append(b, '{')
		first := true
		for k, s := range v {
			if !first {
				out = append(out, ',')
			}
			first = false
			var err error
			if out, err = jsonfast.AppendQuote(out, k); err != nil {
				return b, err
			}
			out = append(out, ':')
			if out, err = jsonfast.AppendQuote(out, s); err != nil {
				return b, err
			}
		}
		return append(out, '}'), nil
	default:
		if out, ok := jsonfast.AppendStruct(b, args); ok {
			return out, nil
		}
	}
	return jsonfast.AppendMarshal(b, args)
}

// appendScalarMap appends a map whose values are strings, numbers,
// booleans or nil; it reports false (appending nothing) otherwise.
func appendScalarMap(b []byte, m map[string]any) ([]byte, bool) {
	start := len(b)
	b = append(b, '{')
	first := true
	for k, v := range m {
		if !first {
			b = append(b, ',')
		}
		first = false
		var err error
		if b, err = jsonfast.AppendQuote(b, k); err != nil {
			return b[:start], false
		}
		b = append(b, ':')
		switch x := v.(type) {
		case string:
			if b, err = jsonfast.AppendQuote(b, x); err != nil {
				return b[:start], false
			}
		case bool:
			b = strconv.AppendBool(b, x)
		case int:
			b = strconv.AppendInt(b, int64(x), 10)
		case int64:
			b = strconv.AppendInt(b, x, 10)
		case float64:
			if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
				return b[:start], false
			}
			b = jsontext.AppendFloat(b, x, 64)
		case nil:
			b = append(b, "null"...)
		default:
			return b[:start], false
		}
	}
	return append(b, '}'), true
}

// modernMeta is the constant part of a modern request's _meta, encoded
// once per protocol version and log level.
type modernMeta struct {
	version string
	level   protocol.LoggingLevel
	members []byte
}

func (c *Client) modernMetaMembers() []byte {
	level := *c.logLevel.Load()
	if mm := c.metaCache.Load(); mm != nil && mm.version == c.version && mm.level == level {
		return mm.members
	}
	var b []byte
	b = append(b, `"io.modelcontextprotocol/protocolVersion":`...)
	b, _ = jsonfast.AppendQuote(b, c.version)
	info, _ := json.Marshal(&c.opts.Info)
	b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
	b = append(b, info...)
	b = append(b, `,"io.modelcontextprotocol/clientCapabilities":`...)
	b = append(b, c.capsJSON...)
	if level != "" {
		b = append(b, `,"io.modelcontextprotocol/logLevel":`...)
		b, _ = jsonfast.AppendQuote(b, string(level))
	}
	c.metaCache.Store(&modernMeta{version: c.version, level: level, members: b})
	return b
}

type metaCache = atomic.Pointer[modernMeta]

// appendJSON appends the _meta object, as MarshalJSONTo writes it.
func (m wireMeta) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	n := 0
	if m.c.modern {
		b = append(b, m.c.modernMetaMembers()...)
		n++
	}
	if m.token != 0 {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, `"progressToken":`...)
		b = strconv.AppendInt(b, m.token, 10)
		n++
	}
	for k, v := range m.user {
		if m.c.modern && (k == protocol.MetaProtocolVersion || k == protocol.MetaClientInfo ||
			k == protocol.MetaClientCapabilities || k == protocol.MetaLogLevel) || (m.token != 0 && k == protocol.MetaProgressToken) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = jsonfast.AppendQuote(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = jsonfast.AppendMarshal(b, v); err != nil {
			return b, err
		}
		n++
	}
	return append(b, '}'), nil
}
