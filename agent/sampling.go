package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// CodeUserRejected is the error code of a sampling request the user
// refused ("User rejected sampling request: -1").
const CodeUserRejected = -1

// Sample answers a server's sampling request with the agent's model,
// after the policy approved it: the host's client options route
// sampling/createMessage here (legacy requests and stateless
// input_required alike). The model gets the server's messages, system
// prompt and limits, and only the tools the request carries: never the
// host's, so that a server cannot make the model call other servers'
// tools. Tool names are mapped to the providers' rules and back; the
// stop reason is MCP's.
//
// Each request is a step of the turn and its tokens the turn's, counted
// before it is made: a server asking again and again meets the turn's
// step and token limits, and its maxTokens is lowered to
// [Limits.MaxSamplingTokens] and to what the token limit leaves.
func (a *Agent) Sample(ctx context.Context, server string, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	rec := &SamplingRecord{Server: server, Request: p, RequestedMaxTokens: p.MaxTokens}
	start := time.Now()
	defer func() {
		rec.Duration = time.Since(start)
		rec.Millis = rec.Duration.Milliseconds()
		a.emit(Event{Kind: EventSampling, Sampling: rec})
	}()
	if err := checkSamplingMessages(p.Messages); err != nil {
		return nil, a.refuseSampling(rec, err.Error(), err)
	}
	if v := a.Policy.decideSampling(ctx, server, p); !v.ok {
		rec.Unasked = v.unasked
		return nil, a.refuseSampling(rec, v.reason, &jsonrpc.Error{Code: CodeUserRejected, Message: "User rejected sampling request: " + v.reason})
	}
	if a.Model == nil {
		return nil, a.refuseSampling(rec, "no model", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the host has no model"})
	}
	names, req := samplingRequest(p)
	g, err := a.budget.reserveSampling(server, a.Limits.withDefaults(), estimateTokens(req), p.MaxTokens)
	if err != nil {
		rec.Refused = limitReached(err)
		return nil, &jsonrpc.Error{Code: CodeUserRejected, Message: "User rejected sampling request: " + rec.Refused}
	}
	req.MaxTokens, rec.MaxTokens = g.maxTokens, g.maxTokens
	reply, err := a.Model.Generate(ctx, req, nil)
	if err != nil {
		a.budget.settle(g, Usage{})
		rec.Refused = err.Error()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the host's model failed: " + err.Error()}
	}
	a.budget.settle(g, reply.Usage)
	rec.Usage, rec.Stop, rec.Text = reply.Usage, reply.Stop, reply.Message.Text()
	return samplingResult(reply, names, a.ModelName), nil
}

// refuseSampling records a request refused before the model was asked.
func (a *Agent) refuseSampling(rec *SamplingRecord, reason string, err error) error {
	rec.Refused = reason
	a.budget.refuse(rec.Server)
	return err
}

// samplingRequest is the model's request for a server's: the server's
// messages, system prompt and limits, and its own tools only, their
// names mapped to the providers' rules.
func samplingRequest(p *protocol.CreateMessageParams) (*Names, *Request) {
	toolNames := make([]string, len(p.Tools))
	for i, t := range p.Tools {
		toolNames[i] = t.Name
	}
	names := NewNames(toolNames)
	req := &Request{System: p.SystemPrompt, Temperature: p.Temperature, StopSequences: p.StopSequences}
	for i := range p.Tools {
		t := &p.Tools[i]
		req.Tools = append(req.Tools, ToolSpec{Name: names.Model(t.Name), Description: describe(t), Schema: schemaForModel(t.InputSchema)})
	}
	if p.ToolChoice != nil && len(req.Tools) > 0 {
		req.ToolChoice = p.ToolChoice.Mode
	}
	req.Messages = samplingMessages(p.Messages, names)
	return names, req
}

// limitReached says which of the host's limits refused a sampling
// request.
func limitReached(err error) string {
	var le *LimitError
	if !errors.As(err, &le) {
		return err.Error()
	}
	switch le.Limit {
	case "steps":
		return fmt.Sprintf("the host's limit of %v model requests a turn is reached", le.Value)
	case "tokens":
		return fmt.Sprintf("the host's limit of %v tokens a turn leaves too few for it", le.Value)
	}
	return err.Error()
}

// checkSamplingMessages enforces the balance of tool uses and results:
// "every assistant message containing ToolUseContent blocks MUST be
// followed by a user message that consists entirely of ToolResultContent
// blocks, with each tool use ... matched by a corresponding tool result".
func checkSamplingMessages(msgs []protocol.SamplingMessage) error {
	invalid := func(msg string) error {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	for i, m := range msgs {
		var uses []string
		results, others := 0, 0
		for _, c := range m.Content {
			switch c.Type {
			case protocol.ContentToolUse:
				uses = append(uses, c.ID)
			case protocol.ContentToolResult:
				results++
			default:
				others++
			}
		}
		if results > 0 && others > 0 {
			return invalid("Tool results mixed with other content")
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 == len(msgs) {
			return invalid("Tool result missing in request")
		}
		got := map[string]bool{}
		for _, c := range msgs[i+1].Content {
			if c.Type == protocol.ContentToolResult {
				got[c.ToolUseID] = true
			}
		}
		for _, id := range uses {
			if !got[id] {
				return invalid("Tool result missing in request")
			}
		}
	}
	return nil
}

// samplingMessages translates a server's messages.
func samplingMessages(msgs []protocol.SamplingMessage, names *Names) []Message {
	var out []Message
	for _, m := range msgs {
		var parts, results []Part
		for i := range m.Content {
			c := &m.Content[i]
			switch c.Type {
			case protocol.ContentToolUse:
				args, _ := json.Marshal(c.Input)
				if c.Input == nil {
					args = []byte("{}")
				}
				parts = append(parts, Part{Type: ToolCallPart, Call: &ToolCall{ID: c.ID, Name: names.Model(c.Name), Arguments: string(args)}})
			case protocol.ContentToolResult:
				r := &ToolResult{CallID: c.ToolUseID, Content: ContentParts(c.Content), IsError: c.IsError}
				if s := structuredText(&protocol.CallToolResult{Content: c.Content, StructuredContent: c.StructuredContent}); s != "" {
					r.Content = append(r.Content, Text(s))
				}
				r.Name = toolNameOf(out, c.ToolUseID)
				results = append(results, Part{Type: ToolResultPart, Result: r})
			default:
				parts = append(parts, contentPart(c))
			}
		}
		if len(results) > 0 {
			out = append(out, Message{Role: Tool, Parts: results})
		}
		if len(parts) > 0 {
			role := User
			if m.Role == protocol.RoleAssistant {
				role = Assistant
			}
			out = append(out, Message{Role: role, Parts: parts})
		}
	}
	return out
}

// toolNameOf finds the name of the call a result answers.
func toolNameOf(msgs []Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls() {
			if c.ID == id {
				return c.Name
			}
		}
	}
	return ""
}

// samplingResult translates the model's reply for the server.
func samplingResult(reply *Reply, names *Names, model string) *protocol.CreateMessageResult {
	res := &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Model: model, StopReason: string(reply.Stop)}
	if reply.Model != "" {
		res.Model = reply.Model
	}
	calls := 0
	for _, p := range reply.Message.Parts {
		switch p.Type {
		case TextPart:
			if p.Text != "" {
				res.Content = append(res.Content, protocol.TextContent(p.Text))
			}
		case ImagePart:
			res.Content = append(res.Content, protocol.ImageContent(p.Data, p.MIMEType))
		case ToolCallPart:
			name, ok := names.Tool(p.Call.Name)
			if !ok {
				name = p.Call.Name
			}
			var input map[string]any
			if v, ok := objectArgs(p.Call.Arguments); ok {
				json.Unmarshal(v, &input)
			}
			if input == nil {
				input = map[string]any{}
			}
			res.Content = append(res.Content, protocol.Content{Type: protocol.ContentToolUse, ID: p.Call.ID, Name: name, Input: input})
			calls++
		}
	}
	if len(res.Content) == 0 {
		res.Content = protocol.SamplingContent{protocol.TextContent("")}
	}
	switch {
	case calls > 0:
		res.StopReason = string(ToolUse)
	case reply.Stop == ToolUse:
		// A tool-use stop without a call: the model ended its turn.
		res.StopReason = string(EndTurn)
	case reply.Stop == "":
		res.StopReason = string(EndTurn)
	}
	return res
}
