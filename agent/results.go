package agent

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// Defaults of [Limits].
const (
	DefaultMaxSteps = 25
	// DefaultMaxResultBytes was the budget of a result before budgets
	// were in tokens ([DefaultMaxResultTokens] at four bytes a token).
	DefaultMaxResultBytes = 32 << 10
	DefaultMaxImageBytes  = 5 << 20
	DefaultContextTokens  = 128_000
	// DefaultMaxSamplingTokens caps a sampling reply: servers ask for
	// what they like (100,000 is seen), and a provider refuses a cap
	// beyond its model's.
	DefaultMaxSamplingTokens = 4096
	// DefaultMaxToolBytes bounds a tool's definition: a description the
	// size of a manual, or a schema of every field of an API, would take
	// the context of every request.
	DefaultMaxToolBytes = 16 << 10
)

// ContentParts turns MCP content (of a tool result, a prompt, a sampling
// message) into parts a model takes: text stays text, images stay images,
// and what models do not take (audio, binary resources, links) is
// described in text so that the model knows it is there.
func ContentParts(content []protocol.Content) []Part {
	var parts []Part
	for i := range content {
		parts = append(parts, contentPart(&content[i]))
	}
	return parts
}

func contentPart(c *protocol.Content) Part {
	switch c.Type {
	case protocol.ContentText:
		return Text(c.Text)
	case protocol.ContentImage:
		data, err := base64.StdEncoding.DecodeString(c.Data)
		if err != nil {
			return Text(fmt.Sprintf("[an image (%s) that could not be decoded: %v]", c.MIMEType, err))
		}
		return Image(data, c.MIMEType)
	case protocol.ContentAudio:
		return Text(fmt.Sprintf("[audio (%s, %d bytes), not given to the model]", c.MIMEType, base64Len(c.Data)))
	case protocol.ContentResourceLink:
		return Text(linkText(c))
	case protocol.ContentResource:
		if c.Resource == nil {
			return Text("[an empty embedded resource]")
		}
		return resourcePart(c.Resource)
	}
	return Text(fmt.Sprintf("[content of type %q, not given to the model]", c.Type))
}

func linkText(c *protocol.Content) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[resource link: %s", c.URI)
	var attrs []string
	if c.Name != "" {
		attrs = append(attrs, "name "+c.Name)
	}
	if c.MIMEType != "" {
		attrs = append(attrs, "type "+c.MIMEType)
	}
	if c.Size > 0 {
		attrs = append(attrs, fmt.Sprintf("%d bytes", c.Size))
	}
	if len(attrs) > 0 {
		b.WriteString(" (" + strings.Join(attrs, ", ") + ")")
	}
	if d := c.Description; d != "" {
		b.WriteString(": " + d)
	}
	b.WriteString("]")
	return b.String()
}

// ResourceParts turns the contents of a resource into parts: text with
// its URI above it, an image, or a note for other binary contents.
func ResourceParts(contents []protocol.ResourceContents) []Part {
	var parts []Part
	for i := range contents {
		parts = append(parts, resourcePart(&contents[i]))
	}
	return parts
}

func resourcePart(rc *protocol.ResourceContents) Part {
	if !rc.IsBlob() {
		return Text(fmt.Sprintf("[resource %s]\n%s", rc.URI, rc.Text))
	}
	if strings.HasPrefix(rc.MIMEType, "image/") {
		if data, err := base64.StdEncoding.DecodeString(rc.Blob); err == nil {
			return Image(data, rc.MIMEType)
		}
	}
	return Text(fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not given to the model]",
		rc.URI, orUnknown(rc.MIMEType), base64Len(rc.Blob)))
}

// base64Len is the length of what s encodes.
func base64Len(s string) int {
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	return len(s) * 3 / 4
}

func orUnknown(s string) string {
	if s == "" {
		return "type unknown"
	}
	return s
}

// toolResult turns a tool's result into what the model is given, before
// its budget (see [Agent.fitResult]): its content, and its structured
// content when no text carries it; images beyond maxImage bytes are left
// out with a note saying so.
func toolResult(res *protocol.CallToolResult, maxImage int) []Part {
	parts := ContentParts(res.Content)
	if extra := structuredText(res); extra != "" {
		parts = append(parts, Text(extra))
	}
	if len(parts) == 0 {
		parts = []Part{Text("")}
	}
	return capImages(parts, maxImage)
}

// structuredText is the structured content as text, when no text block
// already carries it ("a tool that returns structured content SHOULD also
// return the serialized JSON in a TextContent block", but not every tool
// does).
func structuredText(res *protocol.CallToolResult) string {
	sc := res.StructuredContent
	if len(sc) == 0 {
		return ""
	}
	want := compact(sc)
	for _, c := range res.Content {
		if c.Type == protocol.ContentText && bytes.Equal(compact([]byte(c.Text)), want) {
			return ""
		}
	}
	return "structuredContent: " + string(want)
}

func compact(b []byte) []byte {
	v := jsontext.Value(bytes.Clone(b))
	if v.Compact() != nil {
		return bytes.TrimSpace(b)
	}
	return v
}

// capImages leaves out the images larger than maxImage bytes (negative:
// none), with a note in their place: an image is never cut.
func capImages(parts []Part, maxImage int) []Part {
	for i, p := range parts {
		if p.Type == ImagePart && maxImage >= 0 && len(p.Data) > maxImage {
			parts[i] = Text(fmt.Sprintf("[ferry: an image (%s) of %d bytes was left out: the limit is %d bytes]", p.MIMEType, len(p.Data), maxImage))
		}
	}
	return parts
}

// truncate cuts s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// summary is the start of a result's text, for records and displays.
func summary(parts []Part, n int) string {
	var b strings.Builder
	for _, p := range parts {
		s := p.Text
		if p.Type == ImagePart {
			s = fmt.Sprintf("[image %s, %d bytes]", p.MIMEType, len(p.Data))
		}
		if b.Len() > 0 {
			b.WriteString(" ")
		}
		b.WriteString(s)
		if b.Len() > n {
			break
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > n {
		s = truncate(s, n) + "…"
	}
	return s
}

// argumentsJSON is the value recorded for a call's arguments: the object,
// or the text as a JSON string when it is not one.
func argumentsJSON(raw string) jsontext.Value {
	if v, ok := objectArgs(raw); ok {
		return v
	}
	b, _ := json.Marshal(raw)
	return b
}

// objectArgs returns the arguments as a JSON object: "" counts as {}
// (some models send nothing for a tool without parameters).
func objectArgs(raw string) (jsontext.Value, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return jsontext.Value("{}"), true
	}
	v := jsontext.Value(s)
	if !v.IsValid() || v.Kind() != '{' {
		return nil, false
	}
	return v, true
}
