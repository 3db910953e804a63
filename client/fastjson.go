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
// arguments: it is encoded without reflection (jsonfast.Appender), the
// arguments through jsonfast when their type allows.

// AppendJSON appends the request's params (jsonfast.Appender).
func (w *callToolWire) AppendJSON(b []byte) ([]byte, error) {
	o := jsonfast.Out{B: b}
	err := w.AppendOut(&o)
	return o.B, err
}

// AppendOut writes the request's params into o, which may refer to long
// string arguments rather than copy them (jsonfast.OutAppender).
func (w *callToolWire) AppendOut(o *jsonfast.Out) error {
	var err error
	o.B = append(o.B, '{')
	if !w.Meta.IsZero() {
		o.B = append(o.B, `"_meta":`...)
		if o.B, err = w.Meta.appendJSON(o.B); err != nil {
			return err
		}
		o.B = append(o.B, ',')
	}
	o.B = append(o.B, `"name":`...)
	if err = o.Quote(w.Name); err != nil {
		return err
	}
	if w.Arguments != nil {
		o.B = append(o.B, `,"arguments":`...)
		if err = appendArgs(o, w.Arguments); err != nil {
			return err
		}
	}
	if len(w.InputResponses) > 0 {
		o.B = append(o.B, `,"inputResponses":`...)
		if o.B, err = jsonfast.AppendMarshal(o.B, w.InputResponses); err != nil {
			return err
		}
	}
	if w.RequestState != "" {
		o.B = append(o.B, `,"requestState":`...)
		if err = o.Quote(w.RequestState); err != nil {
			return err
		}
	}
	if w.Task != nil {
		o.B = append(o.B, `,"task":`...)
		if o.B, err = jsonfast.AppendMarshal(o.B, w.Task); err != nil {
			return err
		}
	}
	o.B = append(o.B, '}')
	return nil
}

// appendArgs writes tool arguments: raw JSON as it is, flat structs and
// maps of scalars without reflection-based marshalling, anything else
// through json.
func appendArgs(o *jsonfast.Out, args any) error {
	switch v := args.(type) {
	case jsontext.Value:
		o.B = append(o.B, v...)
		return nil
	case stableArgs:
		o.RawRef(v) // written from where they are, when long
		return nil
	case map[string]any:
		if appendScalarMap(o, v) {
			return nil
		}
	case map[string]string:
		start := o.Mark()
		o.B = append(o.B, '{')
		first := true
		for k, s := range v {
			if !first {
				o.B = append(o.B, ',')
			}
			first = false
			if err := o.Quote(k); err != nil {
				o.Rewind(start)
				return err
			}
			o.B = append(o.B, ':')
			if err := o.Quote(s); err != nil {
				o.Rewind(start)
				return err
			}
		}
		o.B = append(o.B, '}')
		return nil
	default:
		if o.Struct(args) {
			return nil
		}
	}
	var err error
	o.B, err = jsonfast.AppendMarshal(o.B, args)
	return err
}

// appendScalarMap writes a map whose values are strings, numbers,
// booleans or nil; it reports false (writing nothing) otherwise.
func appendScalarMap(o *jsonfast.Out, m map[string]any) bool {
	start := o.Mark()
	o.B = append(o.B, '{')
	first := true
	for k, v := range m {
		if !first {
			o.B = append(o.B, ',')
		}
		first = false
		if o.Quote(k) != nil {
			o.Rewind(start)
			return false
		}
		o.B = append(o.B, ':')
		switch x := v.(type) {
		case string:
			if o.Quote(x) != nil {
				o.Rewind(start)
				return false
			}
		case bool:
			o.B = strconv.AppendBool(o.B, x)
		case int:
			o.B = strconv.AppendInt(o.B, int64(x), 10)
		case int64:
			o.B = strconv.AppendInt(o.B, x, 10)
		case float64:
			if x != x || x > 1.7976931348623157e308 || x < -1.7976931348623157e308 {
				o.Rewind(start)
				return false
			}
			o.B = jsontext.AppendFloat(o.B, x, 64)
		case nil:
			o.B = append(o.B, "null"...)
		default:
			o.Rewind(start)
			return false
		}
	}
	o.B = append(o.B, '}')
	return true
}

// statelessMeta is the constant part of a stateless request's _meta, encoded
// once per protocol version and log level.
type statelessMeta struct {
	version string
	level   protocol.LoggingLevel
	members []byte
}

func (c *Client) statelessMetaMembers() []byte {
	level := *c.logLevel.Load()
	if mm := c.metaCache.Load(); mm != nil && mm.version == c.version && mm.level == level {
		return mm.members
	}
	b := c.appendStatelessMeta(nil, c.capsJSON, level)
	c.metaCache.Store(&statelessMeta{version: c.version, level: level, members: b})
	return b
}

// appendStatelessMeta appends the members of a stateless request's _meta
// that declare capabilities caps.
func (c *Client) appendStatelessMeta(b, caps []byte, level protocol.LoggingLevel) []byte {
	b = append(b, `"io.modelcontextprotocol/protocolVersion":`...)
	b, _ = jsonfast.AppendQuote(b, c.version)
	info, _ := json.Marshal(&c.opts.Info)
	b = append(b, `,"io.modelcontextprotocol/clientInfo":`...)
	b = append(b, info...)
	b = append(b, `,"io.modelcontextprotocol/clientCapabilities":`...)
	b = append(b, caps...)
	if level != "" {
		b = append(b, `,"io.modelcontextprotocol/logLevel":`...)
		b, _ = jsonfast.AppendQuote(b, string(level))
	}
	return b
}

type metaCache = atomic.Pointer[statelessMeta]

// appendJSON appends the _meta object, as MarshalJSONTo writes it.
func (m wireMeta) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	n := 0
	if m.c.stateless && m.tasks {
		b = m.c.appendStatelessMeta(b, m.c.taskCapsJSON(), *m.c.logLevel.Load())
		n++
	} else if m.c.stateless {
		b = append(b, m.c.statelessMetaMembers()...)
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
		if m.c.stateless && (k == protocol.MetaProtocolVersion || k == protocol.MetaClientInfo ||
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
