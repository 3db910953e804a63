package anthropic

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/internal/apihttp"
)

// Bounds on what a stream may make the accumulator hold: a server that
// streams without end gets an error, not all of the memory.
const (
	maxReplyBytes = 32 << 20
	maxBlocks     = 1024
)

// streamEvent is one event of the stream, with the members of every type.
type streamEvent struct {
	Type         string        `json:"type"`
	Message      *startMessage `json:"message"`
	Index        int64         `json:"index"`
	ContentBlock *contentBlock `json:"content_block"`
	Delta        eventDelta    `json:"delta"`
	Usage        *usage        `json:"usage"`
	Error        *apiError     `json:"error"`
}

// startMessage is message_start's message.
type startMessage struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Content []contentBlock `json:"content"`
	Usage   *usage         `json:"usage"`
}

type contentBlock struct {
	Type  string         `json:"type"`
	Text  string         `json:"text"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input jsontext.Value `json:"input"`
}

type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// usage holds the counts an event sends: message_delta's are totals of
// the message so far, and leave out those that did not change.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// update takes the counts u sends.
func (u *usage) update(from *usage) {
	if from == nil {
		return
	}
	for _, f := range []struct{ to, from **int64 }{
		{&u.InputTokens, &from.InputTokens}, {&u.OutputTokens, &from.OutputTokens},
		{&u.CacheCreationInputTokens, &from.CacheCreationInputTokens}, {&u.CacheReadInputTokens, &from.CacheReadInputTokens},
	} {
		if *f.from != nil {
			*f.to = *f.from
		}
	}
}

func count(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}

// accumulator joins the events into the message, as the official SDK's
// Message.Accumulate does.
type accumulator struct {
	model      string
	blocks     []contentBlock
	stopReason string
	usage      usage
	size       int // bytes of text and input so far
	started    bool
	stopped    bool
}

// read reads the stream to message_stop, passing the text on as it
// comes.
func (a *accumulator) read(s *apihttp.Stream, stream func(agent.Delta)) error {
	for !a.stopped {
		e, err := s.Next()
		if err == io.EOF {
			return a.ended()
		}
		if err != nil {
			return err
		}
		var ev streamEvent
		if err := json.Unmarshal(e.Data, &ev); err != nil {
			return failed(errors.New("the stream sent an event that is not JSON: " + err.Error()))
		}
		if err := a.add(&ev, stream); err != nil {
			return err
		}
	}
	return nil
}

// ended is the end of a stream before message_stop: a message cut short
// unless it said why it stopped.
func (a *accumulator) ended() error {
	switch {
	case !a.started:
		return failed(errors.New("the stream ended without a message"))
	case a.stopReason == "":
		return failed(errors.New("the stream ended before the message did"))
	}
	return nil
}

func failed(err error) error { return &agent.ModelError{Provider: "anthropic", Err: err} }

func (a *accumulator) add(ev *streamEvent, stream func(agent.Delta)) error {
	switch ev.Type {
	case "message_start":
		return a.start(ev.Message)
	case "message_delta":
		a.stopReason = ev.Delta.StopReason
		a.usage.update(ev.Usage)
	case "content_block_start":
		if ev.Index != int64(len(a.blocks)) || ev.ContentBlock == nil {
			return failed(fmt.Errorf("the stream started content block %d after %d blocks", ev.Index, len(a.blocks)))
		}
		return a.addBlock(*ev.ContentBlock)
	case "content_block_delta":
		return a.addDelta(ev, stream)
	case "content_block_stop":
		return a.checkIndex(ev)
	case "message_stop":
		a.stopped = true
	case "error":
		if ev.Error == nil {
			return failed(errors.New("the stream sent an error"))
		}
		return failed(errors.New(ev.Error.String()))
	}
	// ping, and the events of later versions of the API.
	return nil
}

func (a *accumulator) start(m *startMessage) error {
	if m == nil {
		return failed(errors.New("message_start without a message"))
	}
	a.started, a.model = true, m.Model
	a.usage = usage{}
	a.usage.update(m.Usage)
	a.blocks = nil
	for _, b := range m.Content {
		if err := a.addBlock(b); err != nil {
			return err
		}
	}
	return nil
}

func (a *accumulator) addBlock(b contentBlock) error {
	if len(a.blocks) >= maxBlocks {
		return failed(fmt.Errorf("the message is over %d content blocks", maxBlocks))
	}
	if err := a.grow(len(b.Text) + len(b.Input)); err != nil {
		return err
	}
	a.blocks = append(a.blocks, b)
	return nil
}

func (a *accumulator) checkIndex(ev *streamEvent) error {
	if ev.Index < 0 || ev.Index >= int64(len(a.blocks)) {
		return failed(fmt.Errorf("the stream sent %s for content block %d of %d", ev.Type, ev.Index, len(a.blocks)))
	}
	return nil
}

// addDelta joins a piece to its block. A tool call's input starts as
// {} in content_block_start, and its fragments replace it.
func (a *accumulator) addDelta(ev *streamEvent, stream func(agent.Delta)) error {
	if err := a.checkIndex(ev); err != nil {
		return err
	}
	b, d := &a.blocks[ev.Index], &ev.Delta
	if err := a.grow(len(d.Text) + len(d.PartialJSON)); err != nil {
		return err
	}
	switch d.Type {
	case "text_delta":
		b.Text += d.Text
		if stream != nil && d.Text != "" {
			stream(agent.Delta{Text: d.Text})
		}
	case "input_json_delta":
		if d.PartialJSON == "" {
			break
		}
		if string(b.Input) == "{}" {
			b.Input = nil
		}
		b.Input = append(b.Input, d.PartialJSON...)
	}
	return nil
}

func (a *accumulator) grow(n int) error {
	a.size += n
	if a.size > maxReplyBytes {
		return failed(errors.New("the message is over 32 MiB"))
	}
	return nil
}

func (a *accumulator) reply() (*agent.Reply, error) {
	u := &a.usage
	r := &agent.Reply{Model: a.model, Stop: stopReason(a.stopReason),
		Usage: agent.Usage{
			InputTokens:  count(u.InputTokens) + count(u.CacheReadInputTokens) + count(u.CacheCreationInputTokens),
			OutputTokens: count(u.OutputTokens),
		}}
	r.Message.Role = agent.Assistant
	for _, b := range a.blocks {
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
	return r, nil
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
