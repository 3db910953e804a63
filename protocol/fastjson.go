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
	var err error
	b = append(b, '{')
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	if len(r.Meta) > 0 {
		sep()
		b = append(b, `"_meta":`...)
		if b, err = jsonfast.AppendMarshal(b, r.Meta); err != nil {
			return b, err
		}
	}
	if r.ResultType != "" {
		sep()
		b = append(b, `"resultType":`...)
		if b, err = jsonfast.AppendQuote(b, r.ResultType); err != nil {
			return b, err
		}
	}
	sep()
	b = append(b, `"content":[`...)
	for i := range r.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = r.Content[i].AppendJSON(b); err != nil {
			return b, err
		}
	}
	b = append(b, ']')
	if len(r.StructuredContent) > 0 {
		b = append(b, `,"structuredContent":`...)
		if b, err = appendRaw(b, r.StructuredContent); err != nil {
			return b, err
		}
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// AppendJSON appends the block's JSON: what [Content.MarshalJSONTo]
// writes.
func (c *Content) AppendJSON(b []byte) ([]byte, error) {
	if c.Type != ContentText || len(c.Meta) > 0 {
		return jsonfast.AppendMarshal(b, c)
	}
	var err error
	b = append(b, `{"type":"text","text":`...)
	if b, err = jsonfast.AppendQuote(b, c.Text); err != nil {
		return b, err
	}
	if c.Annotations != nil {
		b = append(b, `,"annotations":`...)
		if b, err = jsonfast.AppendMarshal(b, c.Annotations); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
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
			s, err := c.String()
			if err != nil || s != ContentText {
				return errSlow
			}
			out.Type = s
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
