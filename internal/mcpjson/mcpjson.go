// Package mcpjson encodes the MCP results on the hot path of every tool
// call without reflection, so that a large text result is copied once and
// scanned a word at a time, or not copied at all when the transport
// writes it from where it is (jsonfast.OutAppender). The output is byte
// for byte what json v2 produces for the same values (a test checks it),
// and anything unusual goes through json v2.
//
// It lives apart from package protocol so that the fast paths, which take
// ferry's internal encoder types, stay out of protocol's API.
package mcpjson

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
)

// ToolResult is a [protocol.CallToolResult] as a message body: the server
// converts its results to it ((*ToolResult)(r), which costs nothing), and
// the JSON-RPC encoder finds its fast paths.
type ToolResult protocol.CallToolResult

// AppendJSON appends the result's JSON (jsonfast.Appender).
func (r *ToolResult) AppendJSON(b []byte) ([]byte, error) {
	o := jsonfast.Out{B: b}
	err := r.AppendOut(&o)
	return o.B, err
}

// MarshalJSON lets anything that encodes bodies without jsonfast.Appender
// see the same JSON.
func (r *ToolResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil) }

// AppendOut writes the result's JSON into o, which may refer to a long
// text rather than copy it (jsonfast.OutAppender).
func (r *ToolResult) AppendOut(o *jsonfast.Out) error {
	var err error
	o.B = append(o.B, '{')
	if len(r.Meta) > 0 {
		o.B = append(o.B, `"_meta":`...)
		if o.B, err = appendMeta(o.B, r.Meta); err != nil {
			return err
		}
		o.B = append(o.B, ',')
	}
	if r.ResultType != "" {
		o.B = append(o.B, `"resultType":`...)
		if err = o.Quote(r.ResultType); err != nil {
			return err
		}
		o.B = append(o.B, ',')
	}
	o.B = append(o.B, `"content":[`...)
	for i := range r.Content {
		if i > 0 {
			o.B = append(o.B, ',')
		}
		if err = appendContent(o, &r.Content[i]); err != nil {
			return err
		}
	}
	o.B = append(o.B, ']')
	if len(r.StructuredContent) > 0 {
		o.B = append(o.B, `,"structuredContent":`...)
		if o.B, err = appendRaw(o.B, r.StructuredContent); err != nil {
			return err
		}
	}
	if r.IsError {
		o.B = append(o.B, `,"isError":true`...)
	}
	o.B = append(o.B, '}')
	return nil
}

// appendContent writes a content block: a text block itself, any other
// through json v2 (protocol.Content.MarshalJSONTo).
func appendContent(o *jsonfast.Out, c *protocol.Content) error {
	var err error
	if c.Type != protocol.ContentText || len(c.Meta) > 0 {
		o.B, err = jsonfast.AppendMarshal(o.B, c)
		return err
	}
	o.B = append(o.B, `{"type":"text","text":`...)
	if err = o.Quote(c.Text); err != nil {
		return err
	}
	if c.Annotations != nil {
		o.B = append(o.B, `,"annotations":`...)
		if o.B, err = jsonfast.AppendMarshal(o.B, c.Annotations); err != nil {
			return err
		}
	}
	o.B = append(o.B, '}')
	return nil
}

// appendRaw appends a raw value the way json v2 writes a jsontext.Value:
// compacted.
func appendRaw(b []byte, v jsontext.Value) ([]byte, error) {
	if !hasSpace(v) {
		return append(b, v...), nil
	}
	return jsontext.AppendFormat(b, v)
}

func hasSpace(v []byte) bool {
	for _, c := range v {
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			return true
		}
	}
	return false
}
