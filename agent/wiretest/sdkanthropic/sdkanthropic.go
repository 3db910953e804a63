// Package sdkanthropic is the reference agent/anthropic is held to: the
// same translation of the agent's requests and replies, on Anthropic's
// official Go SDK, as agent/anthropic was until ferry's own client
// replaced the SDK. The wire tests send each request through both and
// compare what reaches the server, and read each stream with both and
// compare the replies.
//
// Replies stream (server-sent events); the SDK's Message.Accumulate joins
// the events, including a tool call's input, which arrives as fragments
// of JSON (input_json_delta) that are valid only once the block ends.
package sdkanthropic

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
)

// DefaultMaxTokens bounds a reply when the request does not (the API
// requires max_tokens).
const DefaultMaxTokens = 4096

// Options configure a [Model].
type Options struct {
	// Model is the model's name ("claude-sonnet-4-5").
	Model string
	// APIKey is the key; empty reads ANTHROPIC_API_KEY.
	APIKey string
	// BaseURL is the API's host, without /v1 as the SDK takes it
	// ("http://127.0.0.1:8080"); empty reads ANTHROPIC_BASE_URL, else
	// Anthropic's.
	BaseURL string
	// MaxTokens is max_tokens when the request sets none (default
	// [DefaultMaxTokens]).
	MaxTokens int64
	// HTTPClient makes the requests (default: the SDK's).
	HTTPClient *http.Client
	// MaxRetries is how often a failed request is retried (default: the
	// SDK's; negative: never).
	MaxRetries int
}

// Model is a model behind the Messages API.
type Model struct {
	// messages is the Messages service alone, not a whole
	// anthropic.Client (Beta, Models, Files, ...): what is not used is
	// not linked.
	messages  anthropic.MessageService
	model     string
	maxTokens int64
}

// New returns the model. It fails when no key is given for Anthropic's
// own API.
func New(o Options) (*Model, error) {
	key := o.APIKey
	if key == "" {
		key = os.Getenv("ANTHROPIC_API_KEY")
	}
	base := o.BaseURL
	if base == "" {
		base = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if key == "" {
		if base == "" || strings.Contains(base, "api.anthropic.com") {
			return nil, &agent.ModelError{Provider: "anthropic", Kind: agent.ModelAuth,
				Err: errors.New("no API key: set ANTHROPIC_API_KEY, or the key in the configuration")}
		}
		key = "none" // a local server takes any key
	}
	opts := []option.RequestOption{option.WithAPIKey(key)}
	if base != "" {
		opts = append(opts, option.WithBaseURL(base))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	if o.MaxRetries != 0 {
		opts = append(opts, option.WithMaxRetries(max(o.MaxRetries, 0)))
	}
	// As anthropic.NewClient does: the SDK's defaults (and environment) first.
	messages := anthropic.NewMessageService(append(anthropic.DefaultClientOptions(), opts...)...)
	m := &Model{messages: messages, model: o.Model, maxTokens: o.MaxTokens}
	if m.maxTokens <= 0 {
		m.maxTokens = DefaultMaxTokens
	}
	return m, nil
}

// Generate sends the request as a streamed message.
func (m *Model) Generate(ctx context.Context, req *agent.Request, stream func(agent.Delta)) (*agent.Reply, error) {
	s := m.messages.NewStreaming(ctx, m.params(req))
	defer s.Close()
	var msg anthropic.Message
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, &agent.ModelError{Provider: "anthropic", Err: err}
		}
		if stream != nil && ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
			stream(agent.Delta{Text: ev.Delta.Text})
		}
	}
	if err := s.Err(); err != nil {
		return nil, wrapError(ctx, err)
	}
	if msg.ID == "" && len(msg.Content) == 0 {
		return nil, &agent.ModelError{Provider: "anthropic", Err: errors.New("the stream ended without a message")}
	}
	return reply(&msg), nil
}

func (m *Model) params(req *agent.Request) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(m.model),
		MaxTokens: m.maxTokens,
		Messages:  messages(req.Messages),
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = req.MaxTokens
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: toolParam(t)})
	}
	if len(req.Tools) > 0 {
		switch req.ToolChoice {
		case "required":
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAny: &anthropic.ToolChoiceAnyParam{}}
		case "none":
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfNone: &anthropic.ToolChoiceNoneParam{}}
		case "auto":
			p.ToolChoice = anthropic.ToolChoiceUnionParam{OfAuto: &anthropic.ToolChoiceAutoParam{}}
		}
	}
	if req.Temperature != nil {
		p.Temperature = anthropic.Float(*req.Temperature)
	}
	p.StopSequences = req.StopSequences
	return p
}

// toolParam translates a tool: input_schema is an object schema whose
// members other than properties and required go along as they are.
func toolParam(t agent.ToolSpec) *anthropic.ToolParam {
	var members map[string]jsontext.Value
	json.Unmarshal(t.Schema, &members)
	schema := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range members {
		var val any
		if json.Unmarshal(v, &val) != nil {
			continue
		}
		switch k {
		case "type":
		case "properties":
			schema.Properties = val
		case "required":
			json.Unmarshal(v, &schema.Required)
		default:
			schema.ExtraFields[k] = val
		}
	}
	if schema.Properties == nil {
		schema.Properties = map[string]any{}
	}
	tp := &anthropic.ToolParam{Name: t.Name, InputSchema: schema}
	if t.Description != "" {
		tp.Description = anthropic.String(t.Description)
	}
	return tp
}

// messages translates the conversation. The API has two roles: tool
// results go in a user message, tool_result blocks first, and messages of
// the same role in a row are joined (a tool message followed by the
// user's next words, after a turn that stopped early).
func messages(msgs []agent.Message) []anthropic.MessageParam {
	var out []anthropic.MessageParam
	for _, msg := range msgs {
		role := anthropic.MessageParamRoleUser
		if msg.Role == agent.Assistant {
			role = anthropic.MessageParamRoleAssistant
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
		out = append(out, anthropic.MessageParam{Role: role, Content: blocks})
	}
	return out
}

func contentBlocks(parts []agent.Part) []anthropic.ContentBlockParamUnion {
	var out []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			if p.Text != "" {
				out = append(out, anthropic.NewTextBlock(p.Text))
			}
		case agent.ImagePart:
			out = append(out, anthropic.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Data)))
		case agent.ToolCallPart:
			out = append(out, anthropic.NewToolUseBlock(toolID(p.Call.ID), inputObject(p.Call.Arguments), p.Call.Name))
		case agent.ToolResultPart:
			out = append(out, anthropic.ContentBlockParamUnion{OfToolResult: toolResult(p.Result)})
		}
	}
	return out
}

// inputObject is a past call's input: its arguments when they are a JSON
// object, else {} (the call's result tells the model what went wrong).
func inputObject(args string) any {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil || v == nil {
		return map[string]any{}
	}
	return jsontext.Value(args)
}

func toolResult(r *agent.ToolResult) *anthropic.ToolResultBlockParam {
	b := &anthropic.ToolResultBlockParam{ToolUseID: toolID(r.CallID)}
	if r.IsError {
		b.IsError = anthropic.Bool(true)
	}
	for _, p := range r.Content {
		switch p.Type {
		case agent.TextPart:
			if p.Text != "" {
				b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
			}
		case agent.ImagePart:
			img := anthropic.NewImageBlockBase64(p.MIMEType, base64.StdEncoding.EncodeToString(p.Data))
			b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: img.OfImage})
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

func reply(msg *anthropic.Message) *agent.Reply {
	r := &agent.Reply{Model: string(msg.Model), Stop: stopReason(string(msg.StopReason)),
		Usage: agent.Usage{
			InputTokens:  msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens,
			OutputTokens: msg.Usage.OutputTokens,
		}}
	r.Message.Role = agent.Assistant
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			r.Message.Parts = append(r.Message.Parts, agent.Text(b.Text))
		case "tool_use":
			args := string(b.Input)
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			r.Message.Parts = append(r.Message.Parts, agent.Part{Type: agent.ToolCallPart,
				Call: &agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: args}})
		}
	}
	return r
}

// stopReason maps stop_reason to MCP's stop reasons.
func stopReason(s string) agent.StopReason {
	switch s {
	case "end_turn", "pause_turn":
		return agent.EndTurn
	case "tool_use":
		return agent.ToolUse
	case "max_tokens", "model_context_window_exceeded":
		return agent.MaxTokens
	case "stop_sequence":
		return agent.StopSequence
	case "refusal":
		return agent.Refusal
	}
	return agent.StopReason(s)
}

func wrapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Error()
		if raw := apiErr.RawJSON(); raw != "" {
			var body struct {
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal([]byte(raw), &body) == nil && body.Error.Message != "" {
				msg = body.Error.Type + ": " + body.Error.Message
			}
		}
		return agent.ClassifyStatus("anthropic", apiErr.StatusCode, msg)
	}
	return agent.ClassifyTransport("anthropic", err)
}
