package protocol

import (
	"encoding/base64"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Content types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"         // 2025-03-26 and later
	ContentResource     = "resource"      // an embedded resource
	ContentResourceLink = "resource_link" // a link to a resource (2025-06-18 and later)
	ContentToolUse      = "tool_use"      // sampling: the model calls a tool (2025-11-25 and later)
	ContentToolResult   = "tool_result"   // sampling: the result of that call (2025-11-25 and later)
)

// Content is one block of content: the schema's ContentBlock union
// (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)
// and the sampling-only ToolUseContent and ToolResultContent, told apart by
// Type. Only the fields of its type are sent.
//
// Build one with [TextContent], [ImageContent], [AudioContent],
// [ResourceLinkContent] or [EmbeddedResourceContent].
type Content struct {
	Type string `json:"type"`

	// text
	Text string `json:"text,omitempty"`
	// image, audio: base64 data and its MIME type; resource_link: the
	// linked resource's MIME type.
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`

	// resource_link (a Resource); Name is also the tool name of tool_use.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Size        int64  `json:"size,omitzero"`
	Icons       []Icon `json:"icons,omitempty"`

	// resource: the embedded contents.
	Resource *ResourceContents `json:"resource,omitzero"`

	// tool_use
	ID    string         `json:"id,omitempty"`
	Input map[string]any `json:"input,omitempty"`
	// tool_result
	ToolUseID         string         `json:"toolUseId,omitempty"`
	Content           []Content      `json:"content,omitempty"`
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	IsError           bool           `json:"isError,omitzero"`

	Annotations *Annotations `json:"annotations,omitzero"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// TextContent returns a text content block.
func TextContent(text string) Content { return Content{Type: ContentText, Text: text} }

// ImageContent returns an image content block holding data.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: ContentImage, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType}
}

// AudioContent returns an audio content block holding data.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: ContentAudio, Data: base64.StdEncoding.EncodeToString(data), MIMEType: mimeType}
}

// ResourceLinkContent returns a block that links to a resource.
func ResourceLinkContent(r Resource) Content {
	return Content{Type: ContentResourceLink, URI: r.URI, Name: r.Name, Title: r.Title,
		Description: r.Description, MIMEType: r.MIMEType, Size: r.Size, Icons: r.Icons,
		Annotations: r.Annotations, Meta: r.Meta}
}

// EmbeddedResourceContent returns a block that embeds a resource's contents.
func EmbeddedResourceContent(rc ResourceContents) Content {
	return Content{Type: ContentResource, Resource: &rc}
}

// DecodeData returns the decoded bytes of an image or audio block.
func (c *Content) DecodeData() ([]byte, error) { return base64.StdEncoding.DecodeString(c.Data) }

// MarshalJSONTo writes only the members of the block's type, and always the
// members that type requires (an empty text is still "text":"").
func (c *Content) MarshalJSONTo(enc *jsontext.Encoder) error {
	var w objWriter
	w.enc = enc
	w.begin()
	w.str("type", c.Type)
	switch c.Type {
	case ContentText:
		w.strAlways("text", c.Text)
	case ContentImage, ContentAudio:
		w.strAlways("data", c.Data)
		w.strAlways("mimeType", c.MIMEType)
	case ContentResourceLink:
		w.strAlways("uri", c.URI)
		w.strAlways("name", c.Name)
		w.str("title", c.Title)
		w.str("description", c.Description)
		w.str("mimeType", c.MIMEType)
		if c.Size != 0 {
			w.value("size", c.Size)
		}
		if len(c.Icons) > 0 {
			w.value("icons", c.Icons)
		}
	case ContentResource:
		rc := c.Resource
		if rc == nil {
			rc = &ResourceContents{}
		}
		w.value("resource", rc)
	case ContentToolUse:
		w.strAlways("id", c.ID)
		w.strAlways("name", c.Name)
		if c.Input == nil {
			w.raw("input", jsontext.Value("{}"))
		} else {
			w.value("input", c.Input)
		}
	case ContentToolResult:
		w.strAlways("toolUseId", c.ToolUseID)
		if c.Content == nil {
			w.raw("content", jsontext.Value("[]"))
		} else {
			w.value("content", c.Content)
		}
		if len(c.StructuredContent) > 0 {
			w.raw("structuredContent", c.StructuredContent)
		}
		if c.IsError {
			w.value("isError", true)
		}
	default:
		// An unknown type from a newer revision: keep whatever is set.
		w.str("text", c.Text)
		w.str("data", c.Data)
		w.str("mimeType", c.MIMEType)
		w.str("uri", c.URI)
		w.str("name", c.Name)
	}
	if c.Annotations != nil {
		w.value("annotations", c.Annotations)
	}
	if len(c.Meta) > 0 {
		w.value("_meta", c.Meta)
	}
	return w.end()
}

// ResourceContents are the contents of a resource: text or a base64 blob.
// The schema's TextResourceContents and BlobResourceContents.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// IsBlob reports whether the contents are binary.
func (rc *ResourceContents) IsBlob() bool { return rc.Blob != "" }

// MarshalJSONTo writes "blob" for binary contents and "text" otherwise.
func (rc *ResourceContents) MarshalJSONTo(enc *jsontext.Encoder) error {
	var w objWriter
	w.enc = enc
	w.begin()
	w.strAlways("uri", rc.URI)
	w.str("mimeType", rc.MIMEType)
	if rc.Blob != "" {
		w.strAlways("blob", rc.Blob)
	} else {
		w.strAlways("text", rc.Text)
	}
	if len(rc.Meta) > 0 {
		w.value("_meta", rc.Meta)
	}
	return w.end()
}

// objWriter writes an object member by member, keeping the first error.
type objWriter struct {
	enc *jsontext.Encoder
	err error
}

func (w *objWriter) begin() {
	w.err = w.enc.WriteToken(jsontext.BeginObject)
}

func (w *objWriter) end() error {
	if w.err == nil {
		w.err = w.enc.WriteToken(jsontext.EndObject)
	}
	return w.err
}

func (w *objWriter) str(name, v string) {
	if v != "" {
		w.strAlways(name, v)
	}
}

func (w *objWriter) strAlways(name, v string) {
	if w.err == nil {
		w.err = w.enc.WriteToken(jsontext.String(name))
	}
	if w.err == nil {
		w.err = w.enc.WriteToken(jsontext.String(v))
	}
}

func (w *objWriter) raw(name string, v jsontext.Value) {
	if w.err == nil {
		w.err = w.enc.WriteToken(jsontext.String(name))
	}
	if w.err == nil {
		w.err = w.enc.WriteValue(v)
	}
}

func (w *objWriter) value(name string, v any) {
	if w.err == nil {
		w.err = w.enc.WriteToken(jsontext.String(name))
	}
	if w.err == nil {
		w.err = json.MarshalEncode(w.enc, v)
	}
}
