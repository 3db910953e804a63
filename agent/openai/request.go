package openai

import (
	"encoding/base64"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
)

// chatRequest is the body of POST /chat/completions, with the members the
// agent uses, as the Chat Completions reference names them.
type chatRequest struct {
	Model               string        `json:"model"`
	Messages            []message     `json:"messages"`
	Stream              bool          `json:"stream"`
	StreamOptions       streamOptions `json:"stream_options"`
	Tools               []tool        `json:"tools,omitempty"`
	ToolChoice          string        `json:"tool_choice,omitempty"`
	MaxCompletionTokens int64         `json:"max_completion_tokens,omitzero"`
	MaxTokens           int64         `json:"max_tokens,omitzero"`
	Temperature         *float64      `json:"temperature,omitzero"`
	Stop                []string      `json:"stop,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type tool struct {
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters"`
}

// message is one message of the conversation. Content is a string or a
// list of contentParts; nil leaves it out (an assistant message that
// only calls tools).
type message struct {
	Role       string     `json:"role"`
	Content    any        `json:"content,omitzero"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitzero"`
}

type imageURL struct {
	URL string `json:"url"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// emptySchema is the parameters of a tool whose schema is not an object.
var emptySchema = jsontext.Value(`{"type":"object","properties":{}}`)

// params translates the request.
func (m *Model) params(req *agent.Request) *chatRequest {
	p := &chatRequest{
		Model:         m.model,
		Messages:      messages(req),
		Stream:        true,
		StreamOptions: streamOptions{IncludeUsage: true},
		Temperature:   req.Temperature,
		Stop:          req.StopSequences,
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, tool{Type: "function", Function: function{Name: t.Name, Description: t.Description, Parameters: parameters(t.Schema)}})
	}
	if len(req.Tools) > 0 {
		p.ToolChoice = req.ToolChoice
	}
	// OpenAI's reasoning models take only max_completion_tokens;
	// compatible servers mostly only max_tokens.
	if m.official {
		p.MaxCompletionTokens = req.MaxTokens
	} else {
		p.MaxTokens = req.MaxTokens
	}
	return p
}

// parameters is a tool's schema when it is a JSON object.
func parameters(schema jsontext.Value) jsontext.Value {
	var members map[string]jsontext.Value
	if json.Unmarshal(schema, &members) != nil || members == nil {
		return emptySchema
	}
	return schema
}

// messages translates the conversation. Tool results become one "tool"
// message per call, right after the assistant message that made the
// calls, as the API wants; their images (which tool messages cannot
// hold) follow in a user message.
func messages(req *agent.Request) []message {
	var out []message
	if req.System != "" {
		out = append(out, message{Role: "system", Content: req.System})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case agent.User:
			out = append(out, userMessage(msg.Parts))
		case agent.Assistant:
			out = append(out, assistantMessage(msg.Parts))
		case agent.Tool:
			out = append(out, toolMessages(msg.Parts)...)
		}
	}
	return out
}

func toolMessages(parts []agent.Part) []message {
	var out []message
	var images []agent.Part
	for _, p := range parts {
		if p.Type != agent.ToolResultPart || p.Result == nil {
			continue
		}
		text, imgs := toolText(p.Result)
		out = append(out, message{Role: "tool", Content: text, ToolCallID: p.Result.CallID})
		images = append(images, imgs...)
	}
	if len(images) > 0 {
		parts := append([]agent.Part{agent.Text("The images the tools returned:")}, images...)
		out = append(out, userMessage(parts))
	}
	return out
}

func userMessage(parts []agent.Part) message {
	if len(parts) == 1 && parts[0].Type == agent.TextPart {
		return message{Role: "user", Content: parts[0].Text}
	}
	var content []contentPart
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			content = append(content, contentPart{Type: "text", Text: p.Text})
		case agent.ImagePart:
			content = append(content, contentPart{Type: "image_url", ImageURL: &imageURL{URL: dataURL(p)}})
		}
	}
	if len(content) == 0 {
		return message{Role: "user", Content: ""}
	}
	return message{Role: "user", Content: content}
}

func dataURL(p agent.Part) string {
	return "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

func assistantMessage(parts []agent.Part) message {
	a := message{Role: "assistant"}
	var text strings.Builder
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			text.WriteString(p.Text)
		case agent.ToolCallPart:
			a.ToolCalls = append(a.ToolCalls, toolCall{ID: p.Call.ID, Type: "function",
				Function: functionCall{Name: p.Call.Name, Arguments: echoArguments(p.Call.Arguments)}})
		}
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content = text.String()
	}
	return a
}

// echoArguments is what a past call's arguments are sent back as: the
// model's text when it is a JSON object, else "{}" (the result of the
// call tells the model what it wrote): compatible servers parse the
// arguments they are sent back, and reject the request when they are not
// JSON.
func echoArguments(s string) string {
	var v map[string]any
	if json.Unmarshal([]byte(s), &v) != nil || v == nil {
		return "{}"
	}
	return s
}

// toolText is a tool result as the text of a tool message (an error marked
// as such) and the images it held.
func toolText(r *agent.ToolResult) (string, []agent.Part) {
	var b strings.Builder
	var images []agent.Part
	if r.IsError && !strings.HasPrefix(r.Text(), "Error") {
		b.WriteString("Error: ")
	}
	for _, p := range r.Content {
		switch p.Type {
		case agent.TextPart:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") && !strings.HasSuffix(b.String(), ": ") {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		case agent.ImagePart:
			images = append(images, p)
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString("[an image (" + p.MIMEType + "), given in the next message]")
		}
	}
	return b.String(), images
}
