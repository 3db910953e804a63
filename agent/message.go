package agent

import (
	"strings"
)

// Role says who a message is from.
type Role string

// The roles of a conversation.
const (
	// User: the person, or a prompt or resource they attached.
	User Role = "user"
	// Assistant: the model, its text and its tool calls.
	Assistant Role = "assistant"
	// Tool: the results of the tool calls of the assistant message
	// before it, one [ToolResult] part per call, in the calls' order.
	Tool Role = "tool"
)

// Message is one message of a conversation, in no provider's format: the
// provider packages translate it to and from their own.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// PartType says what a [Part] holds.
type PartType string

// The kinds of part.
const (
	// TextPart holds Text.
	TextPart PartType = "text"
	// ImagePart holds Data, an image of type MIMEType.
	ImagePart PartType = "image"
	// ToolCallPart holds Call: the assistant asks for a tool call.
	ToolCallPart PartType = "tool_call"
	// ToolResultPart holds Result: the outcome of a call.
	ToolResultPart PartType = "tool_result"
)

// Part is one piece of a message.
type Part struct {
	Type PartType `json:"type"`
	Text string   `json:"text,omitempty"`
	// MIMEType and Data are an image's type and bytes (base64 in JSON).
	MIMEType string `json:"mimeType,omitempty"`
	Data     []byte `json:"data,omitempty"`

	Call   *ToolCall   `json:"call,omitempty"`
	Result *ToolResult `json:"result,omitempty"`
}

// ToolCall is a tool call the model asked for.
type ToolCall struct {
	// ID is the provider's identifier of the call, which its result
	// names.
	ID string `json:"id"`
	// Name is the tool's name as the model knows it (see [Names]).
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments as the model wrote it;
	// it may be invalid (the loop answers such a call with an error).
	Arguments string `json:"arguments"`
}

// ToolResult is the outcome of a tool call, as given to the model.
type ToolResult struct {
	// CallID and Name repeat the call's ID and name.
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Content holds text and image parts.
	Content []Part `json:"content"`
	// IsError says the call failed (the tool said so, it was denied, or
	// its arguments were invalid).
	IsError bool `json:"isError,omitzero"`
}

// Text returns a text part.
func Text(s string) Part { return Part{Type: TextPart, Text: s} }

// Image returns an image part.
func Image(data []byte, mimeType string) Part {
	return Part{Type: ImagePart, Data: data, MIMEType: mimeType}
}

// UserMessage returns a user message of parts.
func UserMessage(parts ...Part) Message { return Message{Role: User, Parts: parts} }

// Text returns the message's text parts joined.
func (m *Message) Text() string { return joinText(m.Parts) }

// ToolCalls returns the message's tool calls.
func (m *Message) ToolCalls() []*ToolCall {
	var out []*ToolCall
	for i := range m.Parts {
		if c := m.Parts[i].Call; m.Parts[i].Type == ToolCallPart && c != nil {
			out = append(out, c)
		}
	}
	return out
}

// Text returns the result's text parts joined.
func (r *ToolResult) Text() string { return joinText(r.Content) }

func joinText(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Type == TextPart {
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
