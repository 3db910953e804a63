package mcpjson

import (
	"errors"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
)

// The result on the hot path of every tool call decodes itself without
// reflection, so that a large text result is scanned a word at a time;
// anything unusual goes through json v2. (Its encoder is
// [ToolResult].)

// DecodeCallToolResult decodes a tools/call result. The JSON must be
// valid (as every message ferry receives is, once decoded). Its _meta is
// decoded through metas, if not nil.
func DecodeCallToolResult(data []byte, r *protocol.CallToolResult, metas *MetaCache) error {
	if decodeCallToolResultFast(data, r, metas) {
		return nil
	}
	*r = protocol.CallToolResult{}
	return json.Unmarshal(data, r)
}

var errSlow = errors.New("mcpjson: not for the fast path")

// decodeCallToolResultFast decodes the common shape of a tool result in
// one pass: text content, structured content, isError, resultType.
func decodeCallToolResultFast(data []byte, r *protocol.CallToolResult, metas *MetaCache) bool {
	c := jsonfast.NewCursor(data)
	err := c.Object(func(name []byte, escaped bool) error {
		if escaped {
			return errSlow
		}
		switch string(name) {
		case "content":
			r.Content = make([]protocol.Content, 0, 1)
			return c.Array(func() error {
				r.Content = append(r.Content, protocol.Content{})
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
func decodeContent(c *jsonfast.Cursor, out *protocol.Content) error {
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
	*out = protocol.Content{}
	return json.Unmarshal(raw, out)
}

// decodeTextContent decodes {"type":"text","text":…} and nothing more.
func decodeTextContent(c *jsonfast.Cursor, out *protocol.Content) bool {
	err := c.Object(func(name []byte, escaped bool) error {
		switch {
		case escaped:
			return errSlow
		case string(name) == "type":
			// Compared where it lies: a copy would be an allocation.
			// An escaped "text" goes the slow way.
			if is, err := c.StringIs(protocol.ContentText); err != nil || !is {
				return errSlow
			}
			out.Type = protocol.ContentText
		case string(name) == "text":
			s, err := c.String()
			out.Text = s
			return err
		default:
			return errSlow
		}
		return nil
	})
	return err == nil && out.Type == protocol.ContentText
}
