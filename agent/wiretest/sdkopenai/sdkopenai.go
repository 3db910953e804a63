// Package sdkopenai is the reference agent/openai is held to: the same
// translation of the agent's requests and replies, on OpenAI's official
// Go SDK, as agent/openai was until ferry's own client replaced the SDK
// (which took 128 s of CPU and 2.8 GB to build, and 30 MiB of the ferry
// command). The wire tests send each request through both and compare
// what reaches the server, and read each stream with both and compare
// the replies.
//
// Replies stream (server-sent events, with stream_options.include_usage
// so that the last chunk carries the usage); tool calls are gathered by
// the SDK's ChatCompletionAccumulator.
package sdkopenai

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/ferrymcp/ferry/agent"
)

// DefaultBaseURL is OpenAI's API.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure a [Model].
type Options struct {
	// Model is the model's name ("gpt-4o", "qwen-plus", "llama3.2").
	Model string
	// APIKey is the key; empty reads OPENAI_API_KEY. An endpoint other
	// than OpenAI's may need none.
	APIKey string
	// BaseURL is the API's root, ending in /v1 as the SDK takes it
	// ("http://127.0.0.1:11434/v1"); empty reads OPENAI_BASE_URL, else
	// OpenAI's.
	BaseURL string
	// HTTPClient makes the requests (default: the SDK's).
	HTTPClient *http.Client
	// MaxRetries is how often a failed request is retried (default: the
	// SDK's, 2; negative: never).
	MaxRetries int
}

// Model is a model behind the Chat Completions API.
type Model struct {
	// chat is the Chat Completions service alone, not a whole
	// openai.Client: the client holds every OpenAI API (Responses,
	// Realtime, ...) and linking them tripled the ferry command's size.
	chat     openai.ChatCompletionService
	model    string
	official bool // OpenAI's own API, which wants max_completion_tokens
}

// New returns the model. It fails only when OpenAI's own API is used
// without a key.
func New(o Options) (*Model, error) {
	key := o.APIKey
	if key == "" {
		key = os.Getenv("OPENAI_API_KEY")
	}
	base := o.BaseURL
	if base == "" {
		base = os.Getenv("OPENAI_BASE_URL")
	}
	if base == "" {
		base = DefaultBaseURL
	}
	official := strings.Contains(base, "api.openai.com")
	m := &Model{model: o.Model, official: official}
	if key == "" {
		if official {
			return nil, &agent.ModelError{Provider: "openai", Kind: agent.ModelAuth,
				Err: errors.New("no API key: set OPENAI_API_KEY, or the key in the configuration")}
		}
		// Local servers take any key; the SDK sends one in any case.
		key = "none"
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithBaseURL(base)}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	if o.MaxRetries != 0 {
		opts = append(opts, option.WithMaxRetries(max(o.MaxRetries, 0)))
	}
	// As openai.NewClient does: the SDK's defaults (and environment) first.
	m.chat = openai.NewChatCompletionService(append(openai.DefaultClientOptions(), opts...)...)
	return m, nil
}

// Generate sends the request as a streamed chat completion.
func (m *Model) Generate(ctx context.Context, req *agent.Request, stream func(agent.Delta)) (*agent.Reply, error) {
	params := m.params(req)
	s := m.chat.NewStreaming(ctx, params)
	defer s.Close()
	acc := openai.ChatCompletionAccumulator{}
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, &agent.ModelError{Provider: "openai", Err: errors.New("the stream sent a chunk that does not continue the reply")}
		}
		if stream != nil && len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			stream(agent.Delta{Text: chunk.Choices[0].Delta.Content})
		}
	}
	if err := s.Err(); err != nil {
		return nil, wrapError(ctx, err)
	}
	if len(acc.Choices) == 0 {
		return nil, &agent.ModelError{Provider: "openai", Err: errors.New("the reply has no choice")}
	}
	return reply(&acc.ChatCompletion), nil
}

// params translates the request.
func (m *Model) params(req *agent.Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.model),
		Messages:      messages(req),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Schema, &schema); err != nil || schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		fn := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	if len(req.Tools) > 0 && req.ToolChoice != "" {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(req.ToolChoice)}
	}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models take only max_completion_tokens;
		// compatible servers mostly only max_tokens.
		if m.official {
			p.MaxCompletionTokens = openai.Int(req.MaxTokens)
		} else {
			p.MaxTokens = openai.Int(req.MaxTokens)
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: req.StopSequences}
	}
	return p
}

// messages translates the conversation. Tool results become one "tool"
// message per call, right after the assistant message that made the
// calls, as the API wants; their images (which tool messages cannot
// hold) follow in a user message.
func messages(req *agent.Request) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case agent.User:
			out = append(out, userMessage(msg.Parts))
		case agent.Assistant:
			out = append(out, assistantMessage(msg.Parts))
		case agent.Tool:
			var images []agent.Part
			for _, p := range msg.Parts {
				if p.Type != agent.ToolResultPart || p.Result == nil {
					continue
				}
				text, imgs := toolText(p.Result)
				out = append(out, openai.ToolMessage(text, p.Result.CallID))
				images = append(images, imgs...)
			}
			if len(images) > 0 {
				parts := append([]agent.Part{agent.Text("The images the tools returned:")}, images...)
				out = append(out, userMessage(parts))
			}
		}
	}
	return out
}

func userMessage(parts []agent.Part) openai.ChatCompletionMessageParamUnion {
	if len(parts) == 1 && parts[0].Type == agent.TextPart {
		return openai.UserMessage(parts[0].Text)
	}
	var content []openai.ChatCompletionContentPartUnionParam
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			content = append(content, openai.TextContentPart(p.Text))
		case agent.ImagePart:
			content = append(content, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(p)}))
		}
	}
	if len(content) == 0 {
		return openai.UserMessage("")
	}
	return openai.UserMessage(content)
}

func dataURL(p agent.Part) string {
	return "data:" + p.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(p.Data)
}

func assistantMessage(parts []agent.Part) openai.ChatCompletionMessageParamUnion {
	var a openai.ChatCompletionAssistantMessageParam
	var text strings.Builder
	for _, p := range parts {
		switch p.Type {
		case agent.TextPart:
			text.WriteString(p.Text)
		case agent.ToolCallPart:
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: p.Call.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name: p.Call.Name, Arguments: echoArguments(p.Call.Arguments),
					},
				},
			})
		}
	}
	if text.Len() > 0 || len(a.ToolCalls) == 0 {
		a.Content.OfString = param.NewOpt(text.String())
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
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

// reply translates the accumulated completion.
func reply(c *openai.ChatCompletion) *agent.Reply {
	ch := c.Choices[0]
	r := &agent.Reply{Model: c.Model, Stop: stopReason(ch.FinishReason),
		Usage: agent.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}}
	r.Message.Role = agent.Assistant
	if ch.Message.Content != "" {
		r.Message.Parts = append(r.Message.Parts, agent.Text(ch.Message.Content))
	} else if ch.Message.Refusal != "" {
		r.Message.Parts = append(r.Message.Parts, agent.Text(ch.Message.Refusal))
		r.Stop = agent.Refusal
	}
	for _, tc := range ch.Message.ToolCalls {
		r.Message.Parts = append(r.Message.Parts, agent.Part{Type: agent.ToolCallPart,
			Call: &agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	return r
}

// stopReason maps finish_reason to MCP's stop reasons.
func stopReason(s string) agent.StopReason {
	switch s {
	case "stop":
		return agent.EndTurn
	case "tool_calls", "function_call":
		return agent.ToolUse
	case "length":
		return agent.MaxTokens
	case "content_filter":
		return agent.Refusal
	}
	return agent.StopReason(s)
}

// wrapError classifies a failed request.
func wrapError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return agent.ClassifyStatus("openai", apiErr.StatusCode, apiErr.Message)
	}
	return agent.ClassifyTransport("openai", err)
}
