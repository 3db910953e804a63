package openai

import (
	"cmp"
	"errors"
	"io"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/internal/apihttp"
)

// Bounds on what a stream may make the accumulator hold: a server that
// streams without end gets an error, not all of the memory.
const (
	maxReplyBytes = 32 << 20
	maxToolCalls  = 1024
)

// chunk is one event of the stream (a chat.completion.chunk), or an
// error sent in the middle of it.
type chunk struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Choices []chunkDelta `json:"choices"`
	Usage   *usage       `json:"usage"`
	Error   *apiError    `json:"error"`
}

type chunkDelta struct {
	Index        int64  `json:"index"`
	Delta        delta  `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type delta struct {
	Content   string          `json:"content"`
	Refusal   string          `json:"refusal"`
	ToolCalls []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	// Index is the call's place among the reply's calls. A server that
	// omits it sends each call whole, under its own id.
	Index    *int64 `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// accumulator joins the chunks of the first choice into a reply, as the
// official SDK's ChatCompletionAccumulator does.
type accumulator struct {
	id, model      string
	content        []byte
	refusal        []byte
	calls          []agent.ToolCall
	finish         string
	usage          usage
	choices        int // chunks with a delta of the first choice
	size           int // bytes of text, names and arguments so far
	done, finished bool
}

var errNotContinued = errors.New("the stream sent a chunk that does not continue the reply")

// read reads the stream to its end ("data: [DONE]"), passing the text
// on as it comes.
func (a *accumulator) read(s *apihttp.Stream, stream func(agent.Delta)) error {
	for !a.done {
		e, err := s.Next()
		if err == io.EOF {
			return a.ended()
		}
		if err != nil {
			return err
		}
		if string(e.Data) == "[DONE]" {
			a.done = true
			continue
		}
		var c chunk
		if err := json.Unmarshal(e.Data, &c); err != nil {
			return &agent.ModelError{Provider: "openai", Err: errors.New("the stream sent an event that is not a chunk: " + err.Error())}
		}
		if err := a.add(&c, stream); err != nil {
			return err
		}
	}
	return nil
}

// ended is the end of a stream without [DONE]: a reply cut short unless
// its choice said why it finished.
func (a *accumulator) ended() error {
	if a.finished {
		return nil
	}
	return &agent.ModelError{Provider: "openai", Err: errors.New("the stream ended before the reply did")}
}

func (a *accumulator) add(c *chunk, stream func(agent.Delta)) error {
	if c.Error != nil {
		return &agent.ModelError{Provider: "openai", Err: errors.New(streamError(c.Error))}
	}
	if a.id != "" && c.ID != "" && c.ID != a.id {
		return &agent.ModelError{Provider: "openai", Err: errNotContinued}
	}
	a.id = cmp.Or(a.id, c.ID)
	a.model = cmp.Or(c.Model, a.model)
	if c.Usage != nil {
		a.usage = *c.Usage
	}
	for i := range c.Choices {
		if ch := &c.Choices[i]; ch.Index == 0 {
			if err := a.addChoice(ch, stream); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *accumulator) addChoice(ch *chunkDelta, stream func(agent.Delta)) error {
	a.choices++
	if ch.FinishReason != "" {
		a.finish, a.finished = ch.FinishReason, true
	}
	d := &ch.Delta
	if err := a.grow(len(d.Content) + len(d.Refusal)); err != nil {
		return err
	}
	a.content = append(a.content, d.Content...)
	a.refusal = append(a.refusal, d.Refusal...)
	if stream != nil && d.Content != "" {
		stream(agent.Delta{Text: d.Content})
	}
	for i := range d.ToolCalls {
		if err := a.addCall(&d.ToolCalls[i]); err != nil {
			return err
		}
	}
	return nil
}

// addCall joins a fragment of a tool call to the call at its index.
func (a *accumulator) addCall(t *toolCallDelta) error {
	i := a.callIndex(t)
	if i < 0 || i >= maxToolCalls {
		return &agent.ModelError{Provider: "openai", Err: errNotContinued}
	}
	if err := a.grow(len(t.ID) + len(t.Function.Name) + len(t.Function.Arguments)); err != nil {
		return err
	}
	for len(a.calls) <= i {
		a.calls = append(a.calls, agent.ToolCall{})
	}
	c := &a.calls[i]
	c.ID = cmp.Or(t.ID, c.ID)
	c.Name += t.Function.Name
	c.Arguments += t.Function.Arguments
	return nil
}

// callIndex is the index of the call a fragment belongs to: its own, or
// without one, the last call unless the fragment starts a call of
// another id.
func (a *accumulator) callIndex(t *toolCallDelta) int {
	if t.Index != nil {
		i := *t.Index
		if i == -1 { // as the SDK reads it
			i = 0
		}
		if i < 0 || i >= maxToolCalls {
			return -1
		}
		return int(i)
	}
	n := len(a.calls)
	if n == 0 || t.ID != "" && a.calls[n-1].ID != "" && a.calls[n-1].ID != t.ID {
		return n
	}
	return n - 1
}

func (a *accumulator) grow(n int) error {
	a.size += n
	if a.size > maxReplyBytes {
		return &agent.ModelError{Provider: "openai", Err: errors.New("the reply is over 32 MiB")}
	}
	return nil
}

// reply translates the accumulated completion.
func (a *accumulator) reply() (*agent.Reply, error) {
	if a.choices == 0 {
		return nil, &agent.ModelError{Provider: "openai", Err: errors.New("the reply has no choice")}
	}
	r := &agent.Reply{Model: a.model, Stop: stopReason(a.finish),
		Usage: agent.Usage{InputTokens: a.usage.PromptTokens, OutputTokens: a.usage.CompletionTokens}}
	r.Message.Role = agent.Assistant
	if len(a.content) > 0 {
		r.Message.Parts = append(r.Message.Parts, agent.Text(string(a.content)))
	} else if len(a.refusal) > 0 {
		r.Message.Parts = append(r.Message.Parts, agent.Text(string(a.refusal)))
		r.Stop = agent.Refusal
	}
	for i := range a.calls {
		c := a.calls[i]
		r.Message.Parts = append(r.Message.Parts, agent.Part{Type: agent.ToolCallPart, Call: &c})
	}
	return r, nil
}

// streamError is the message of an error sent in the stream.
func streamError(e *apiError) string {
	if e.Message == "" {
		return "the stream sent an error"
	}
	return e.Message
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
