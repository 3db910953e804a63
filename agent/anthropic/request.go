package anthropic

import (
	"encoding/base64"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
)

// messagesRequest is the body of POST /v1/messages, with the members the
// agent uses, as the Messages reference names them.
type messagesRequest struct {
	Model         string         `json:"model"`
	MaxTokens     int64          `json:"max_tokens"`
	Messages      []messageParam `json:"messages,omitzero"`
	System        []block        `json:"system,omitempty"`
	Tools         []toolParam    `json:"tools,omitempty"`
	ToolChoice    *toolChoice    `json:"tool_choice,omitzero"`
	Temperature   *float64       `json:"temperature,omitzero"`
	StopSequences []string       `json:"stop_sequences,omitzero"`
	Stream        bool           `json:"stream"`
}

type messageParam struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of any type: text, image, tool_use,
// tool_result; the members of the other types are left out.
type block struct {
	Type   string       `json:"type"`
	Text   string       `json:"text,omitempty"`
	Source *imageSource `json:"source,omitzero"`
	// tool_use
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input jsontext.Value `json:"input,omitzero"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	IsError   bool    `json:"is_error,omitzero"`
	Content   []block `json:"content,omitzero"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type toolParam struct {
	Name        string                    `json:"name"`
	Description string                    `json:"description,omitempty"`
	InputSchema map[string]jsontext.Value `json:"input_schema"`
}

type toolChoice struct {
	Type string `json:"type"`
}

// toolChoiceType is the API's tool_choice type for the agent's choice.
func toolChoiceType(choice string) (string, bool) {
	switch choice {
	case "required":
		return "any", true
	case "none", "auto":
		return choice, true
	}
	return "", false
}

func (m *Model) params(req *agent.Request) *messagesRequest {
	p := &messagesRequest{
		Model:         m.model,
		MaxTokens:     m.maxTokens,
		Messages:      messages(req.Messages),
		Temperature:   req.Temperature,
		StopSequences: req.StopSequences,
		Stream:        true,
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		p.System = []block{{Type: "text", Text: req.System}}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, toolParam{Name: t.Name, Description: t.Description, InputSchema: inputSchema(t.Schema)})
	}
	if c, ok := toolChoiceType(req.ToolChoice); ok && len(req.Tools) > 0 {
		p.ToolChoice = &toolChoice{Type: c}
	}
	return p
}

// inputSchema is a tool's input_schema: an object schema, the members of
// the tool's own going along as they are, but for a required that is not
// a list of names.
func inputSchema(schema jsontext.Value) map[string]jsontext.Value {
	var members map[string]jsontext.Value
	json.Unmarshal(schema, &members)
	out := map[string]jsontext.Value{"type": jsontext.Value(`"object"`), "properties": jsontext.Value(`{}`)}
	for k, v := range members {
		switch k {
		case "type":
		case "properties":
			if string(v) != "null" {
				out[k] = v
			}
		case "required":
			var names []string
			if json.Unmarshal(v, &names) == nil && names != nil {
				out[k] = v
			}
		default:
			out[k] = v
		}
	}
	return out
}

// messages translates the conversation. The API has two roles: tool
// results go in a user message, tool_result blocks first, and messages of
// the same role in a row are joined (a tool message followed by the
// user's next words, after a turn that stopped early).
func messages(msgs []agent.Message) []messageParam {
	var out []messageParam
	for _, msg := range msgs {
		role := "user"
		if msg.Role == agent.Assistant {
			role = "assistant"
		}
		blocks := contentBlocks(msg.Parts)
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			prev := &out[n-1]
			if msg.Role == agent.Tool {
				// Results first, whatever came before them.
				prev.Content = append(blocks, prev.Content...)
			} else {
				prev.Content = append(prev.Content, blocks...)
			}
			continue
		}
		out = append(out, messageParam{Role: role, Content: blocks})
	}
	return out
}

func contentBlocks(parts []agent.Part) []block {
	var out []block
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			if p.Text != "" {
				out = append(out, block{Type: "text", Text: p.Text})
			}
		case agent.ImagePart:
			out = append(out, imageBlock(p))
		case agent.ToolCallPart:
			out = append(out, block{Type: "tool_use", ID: toolID(p.Call.ID), Name: p.Call.Name, Input: inputObject(p.Call.Arguments)})
		case agent.ToolResultPart:
			out = append(out, toolResult(p.Result))
		}
	}
	return out
}

func imageBlock(p agent.Part) block {
	return block{Type: "image", Source: &imageSource{Type: "base64", MediaType: p.MIMEType, Data: base64.StdEncoding.EncodeToString(p.Data)}}
}

// inputObject is a past call's input: its arguments when they are a JSON
// object, else {} (the call's result tells the model what went wrong).
func inputObject(args string) jsontext.Value {
	var v map[string]jsontext.Value
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		return jsontext.Value(`{}`)
	}
	return jsontext.Value(args)
}

func toolResult(r *agent.ToolResult) block {
	b := block{Type: "tool_result", ToolUseID: toolID(r.CallID), IsError: r.IsError}
	for _, p := range r.Content {
		switch p.Type {
		case agent.TextPart:
			if p.Text != "" {
				b.Content = append(b.Content, block{Type: "text", Text: p.Text})
			}
		case agent.ImagePart:
			b.Content = append(b.Content, imageBlock(p))
		}
	}
	return b
}

// toolID makes an id fit the API's pattern ^[a-zA-Z0-9_-]+$ (a
// conversation begun with another provider may hold other ids); the same
// id always becomes the same.
func toolID(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "call"
	}
	return string(b)
}
