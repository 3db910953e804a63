package protocol

import (
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
)

// The types on the hot path of every tool call encode and decode
// themselves without reflection, so that a large text result is copied
// once and scanned a word at a time. The output is byte for byte what
// json v2 produces for them (a test checks it), and anything unusual goes
// through json v2.

// AppendJSON appends the result's JSON (jsonrpc.Appender).
func (r *CallToolResult) AppendJSON(b []byte) ([]byte, error) {
	o := jsonfast.Out{B: b}
	err := r.AppendOut(&o)
	return o.B, err
}

// AppendOut writes the result's JSON into o, which may refer to a long
// text rather than copy it (jsonfast.OutAppender).
func (r *CallToolResult) AppendOut(o *jsonfast.Out) error {
	var err error
	o.B = append(o.B, '{')
	if len(r.Meta) > 0 {
		o.B = append(o.B, `"_meta":`...)
		if o.B, err = jsonfast.AppendMarshal(o.B, r.Meta); err != nil {
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
		if err = r.Content[i].appendOut(o); err != nil {
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

// AppendJSON appends the block's JSON: what [Content.MarshalJSONTo]
// writes.
func (c *Content) AppendJSON(b []byte) ([]byte, error) {
	o := jsonfast.Out{B: b}
	err := c.appendOut(&o)
	return o.B, err
}

func (c *Content) appendOut(o *jsonfast.Out) error {
	var err error
	if c.Type != ContentText || len(c.Meta) > 0 {
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

// DecodeCallToolResult decodes a tools/call result. The JSON must be
// valid (as every message ferry receives is, once decoded). Its _meta is
// decoded through metas, if not nil.
func DecodeCallToolResult(data []byte, r *CallToolResult, metas *MetaCache) error {
	if decodeCallToolResultFast(data, r, metas) {
		return nil
	}
	*r = CallToolResult{}
	return json.Unmarshal(data, r)
}

var errSlow = errors.New("protocol: not for the fast path")

// decodeCallToolResultFast decodes the common shape of a tool result in
// one pass: text content, structured content, isError, resultType.
func decodeCallToolResultFast(data []byte, r *CallToolResult, metas *MetaCache) bool {
	c := jsonfast.NewCursor(data)
	err := c.Object(func(name []byte, escaped bool) error {
		if escaped {
			return errSlow
		}
		switch string(name) {
		case "content":
			r.Content = make([]Content, 0, 1)
			return c.Array(func() error {
				r.Content = append(r.Content, Content{})
				return decodeContent(c, &r.Content[len(r.Content)-1])
			})
		case "structuredContent":
			v, err := c.Raw()
			if err == nil && string(v) != "null" {
				r.StructuredContent = append(jsontext.Value(nil), v...)
			}
			return err
		case "isError":
			v, err := c.Literal()
			switch {
			case err != nil:
				return err
			case string(v) == "true":
				r.IsError = true
			case string(v) != "false":
				return errSlow
			}
		case "resultType":
			s, err := c.String()
			r.ResultType = s
			return err
		case "_meta":
			v, err := c.Raw()
			switch {
			case err != nil || string(v) == "null":
			case metas != nil:
				r.Meta, err = metas.Decode(v)
			default:
				err = json.Unmarshal(v, &r.Meta)
			}
			return err
		default:
			return c.Skip()
		}
		return nil
	})
	return err == nil && r.Content != nil
}

// decodeContent decodes a text block itself, and any other through json.
func decodeContent(c *jsonfast.Cursor, out *Content) error {
	// A text block is decoded where it is, its text scanned once; any
	// other is found again and given to json v2.
	start := *c
	if decodeTextContent(c, out) {
		return nil
	}
	*c = start
	raw, err := c.Raw()
	if err != nil {
		return err
	}
	*out = Content{}
	return json.Unmarshal(raw, out)
}

// decodeTextContent decodes {"type":"text","text":…} and nothing more.
func decodeTextContent(c *jsonfast.Cursor, out *Content) bool {
	err := c.Object(func(name []byte, escaped bool) error {
		switch {
		case escaped:
			return errSlow
		case string(name) == "type":
			// Compared where it lies: a copy would be an allocation.
			// An escaped "text" goes the slow way.
			if is, err := c.StringIs(ContentText); err != nil || !is {
				return errSlow
			}
			out.Type = ContentText
		case string(name) == "text":
			s, err := c.String()
			out.Text = s
			return err
		default:
			return errSlow
		}
		return nil
	})
	return err == nil && out.Type == ContentText
}
