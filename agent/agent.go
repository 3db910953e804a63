package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// Toolbox is where the agent's tools come from: a *host.Host, whose list
// gathers the tools of many servers under names such as server__tool.
type Toolbox interface {
	// Tools lists the tools; servers that fail are left out and their
	// errors joined.
	Tools(ctx context.Context) ([]host.Tool, error)
	// Call calls a tool by its name in the list. Cancelling ctx cancels
	// the call (the server is sent notifications/cancelled).
	Call(ctx context.Context, name string, args any) (*protocol.CallToolResult, error)
}

// Limits bound a turn. The zero value means the defaults.
type Limits struct {
	// MaxSteps bounds the model requests of a turn (default
	// [DefaultMaxSteps]; negative: no limit).
	MaxSteps int
	// MaxTime bounds a turn's duration (0: no limit).
	MaxTime time.Duration
	// MaxTokens bounds the tokens of a turn, input and output of every
	// request together (0: no limit).
	MaxTokens int64
	// MaxResultTokens is the budget of a tool result's text given to the
	// model, in tokens of its context (default [DefaultMaxResultTokens],
	// at most an eighth of ContextTokens; negative: none). A result over
	// its budget is kept whole in a file, and the model is given its head
	// and its tail, with a note on how to read the rest (see
	// [ResultReadTool]). ResultTokens sets the budget of a server's
	// results, or a tool's, by its name (server, or server__tool).
	MaxResultTokens int
	ResultTokens    map[string]int
	// MaxResultBytes is the budget of a result in bytes, as it was given
	// before budgets were in tokens: when MaxResultTokens is unset, it is
	// a quarter of this.
	MaxResultBytes int
	// MaxImageBytes bounds the size of each image (default
	// [DefaultMaxImageBytes]): a larger one is left out, with a note.
	// Images are never cut, nor counted against the result's budget.
	MaxImageBytes int
	// ContextTokens is the model's context window, against which the
	// size of the tool schemas is weighed (default
	// [DefaultContextTokens]).
	ContextTokens int
	// MaxSamplingTokens caps the reply to a server's sampling request,
	// whatever maxTokens it asks for (default [DefaultMaxSamplingTokens];
	// negative: the server's). The turn's token limit lowers it further.
	MaxSamplingTokens int64
	// MaxToolBytes bounds the definition (name, description, schema) of
	// one tool given to the model, and MaxServerToolBytes those of one
	// server's tools together; a tool beyond either is left out, with a
	// warning naming it (defaults [DefaultMaxToolBytes] and ContextTokens
	// bytes, about a quarter of the context; negative: no limit).
	MaxToolBytes       int
	MaxServerToolBytes int
	// ToolSearchTools and ToolSearchTokens are the thresholds of tool
	// search: when there are more tools than ToolSearchTools (default
	// [DefaultToolSearchTools]), or their definitions take more than
	// ToolSearchTokens (default [DefaultToolSearchTokens]), the model is
	// not sent every tool's schema in every request but a tool to search
	// them and one to load those it needs (see [ToolSearchTool]).
	// Negative: that threshold never applies.
	ToolSearchTools  int
	ToolSearchTokens int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSteps == 0 {
		l.MaxSteps = DefaultMaxSteps
	}
	if l.MaxImageBytes == 0 {
		l.MaxImageBytes = DefaultMaxImageBytes
	}
	if l.ContextTokens <= 0 {
		l.ContextTokens = DefaultContextTokens
	}
	l.MaxResultTokens = l.resultBudget()
	if l.MaxSamplingTokens == 0 {
		l.MaxSamplingTokens = DefaultMaxSamplingTokens
	}
	if l.MaxToolBytes == 0 {
		l.MaxToolBytes = DefaultMaxToolBytes
	}
	if l.MaxServerToolBytes == 0 {
		l.MaxServerToolBytes = l.ContextTokens
	}
	if l.ToolSearchTools == 0 {
		l.ToolSearchTools = DefaultToolSearchTools
	}
	if l.ToolSearchTokens == 0 {
		l.ToolSearchTokens = DefaultToolSearchTokens
	}
	return l
}

// resultBudget is the default budget of a result, in tokens: the one
// set, else the one set in bytes, else the default, lowered to an
// eighth of the context; ContextTokens is set.
func (l Limits) resultBudget() int {
	switch {
	case l.MaxResultTokens != 0:
		return l.MaxResultTokens
	case l.MaxResultBytes < 0:
		return -1
	case l.MaxResultBytes > 0:
		return max(l.MaxResultBytes/bytesPerToken, 1)
	}
	return min(DefaultMaxResultTokens, l.ContextTokens/8)
}

// LimitError says a turn stopped at a limit.
type LimitError struct {
	// Limit is "steps", "tokens" or "time".
	Limit string
	Value any
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "steps":
		return fmt.Sprintf("the turn stopped after %v model requests (the step limit)", e.Value)
	case "tokens":
		return fmt.Sprintf("the turn stopped after using more than %v tokens (the token limit)", e.Value)
	}
	return fmt.Sprintf("the turn stopped after %v (the time limit)", e.Value)
}

// Agent runs turns of a conversation. Set its fields before the first
// turn; a turn at a time.
type Agent struct {
	// Model answers. Required.
	Model Model
	// ModelName names the model in sampling results and saved
	// conversations ("openai/gpt-4o").
	ModelName string
	// Tools are the tools the model may call; nil means none.
	Tools Toolbox
	// System is the system prompt.
	System string
	// Policy approves tool calls and sampling requests; nil refuses
	// them all.
	Policy *Policy
	Limits Limits
	// MaxOutputTokens bounds each reply (0: the provider's default).
	MaxOutputTokens int64
	// OnEvent sees what happens, one event at a time.
	OnEvent func(Event)
	// Conversation is the conversation so far; nil starts one.
	Conversation *Conversation
	// Skills are the servers whose skills the model is offered (the
	// skills extension, see [SkillLoadTool]); nil offers none. A skill
	// is loaded when the model asks, after the Policy's approval.
	Skills SkillSource
	// ResultDir is the directory of the conversation where the tool
	// results over their budget are kept whole, one file each, for the
	// model to page through and the user to open; "" makes one in the
	// system's temporary directory at the first such result.
	ResultDir string

	emitMu sync.Mutex
	// warnings are the running turn's warnings, for its result.
	warnings []string
	state    toolState
	skills   skillState
	results  resultsState
	// budget counts the model requests and tokens of the running turn,
	// sampling included.
	budget budget
}

// Result is the outcome of a turn.
type Result struct {
	// Answer is the text of the model's last reply.
	Answer string `json:"answer"`
	// Calls are the turn's tool calls, in the order the model asked for
	// them.
	Calls []*CallRecord `json:"toolCalls"`
	Usage Usage         `json:"usage"`
	// Steps is the number of model requests, the servers' sampling
	// requests included: what the step limit bounds.
	Steps int        `json:"steps"`
	Stop  StopReason `json:"stopReason,omitempty"`
	Model string     `json:"model,omitempty"`
	// Sampling is what each server's sampling requests took.
	Sampling []SamplingCount `json:"sampling,omitempty"`
	// Warnings are the texts of the turn's warning events.
	Warnings []string `json:"warnings,omitempty"`
	// Error says why the turn stopped early, when it did.
	Error *Failure `json:"error,omitempty"`
}

func (a *Agent) emit(e Event) {
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	if e.Kind == EventWarning {
		a.warnings = append(a.warnings, e.Text)
	}
	if a.OnEvent != nil {
		a.OnEvent(e)
	}
}

// takeWarnings returns the warnings so far and forgets them.
func (a *Agent) takeWarnings() []string {
	a.emitMu.Lock()
	defer a.emitMu.Unlock()
	w := a.warnings
	a.warnings = nil
	return w
}

func (a *Agent) conversation() *Conversation {
	if a.Conversation == nil {
		a.Conversation = &Conversation{}
	}
	return a.Conversation
}

// Run runs one turn: the user's message, then model requests and tool
// calls until the model answers or a limit is reached. The conversation
// keeps everything; every tool call the model asked for has a result in
// it, even when the turn stopped early (cancelled, at a limit), so that
// the next request is valid.
//
// When ctx is cancelled, the tool calls in flight are cancelled and Run
// returns the partial result with ctx's error; a limit ends the turn
// with a *[LimitError].
func (a *Agent) Run(ctx context.Context, input ...Part) (res *Result, err error) {
	if a.Model == nil {
		return nil, errors.New("agent: no model")
	}
	lim := a.Limits.withDefaults()
	conv := a.conversation()
	if len(input) > 0 {
		conv.Messages = append(conv.Messages, UserMessage(input...))
	}
	a.budget.reset()
	a.skills.newTurn()
	a.takeWarnings()
	if lim.MaxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, lim.MaxTime, &LimitError{Limit: "time", Value: lim.MaxTime})
		defer cancel()
	}
	res = &Result{Model: a.ModelName}
	defer func() {
		res.Steps, res.Usage, res.Sampling = a.budget.spent()
		res.Error = NewFailure(err)
		res.Warnings = a.takeWarnings()
		conv.Usage = conv.Usage.Add(res.Usage)
		a.emit(Event{Kind: EventUsage, Usage: res.Usage})
	}()
	for step := 1; ; step++ {
		if err := a.budget.takeStep(lim); err != nil {
			return res, err
		}
		done, err := a.step(ctx, step, lim, res)
		if err != nil {
			if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil {
				err = cause
			}
			return res, err
		}
		if done {
			return res, nil
		}
	}
}

// step makes one model request and runs the tool calls of its reply; done
// says the model answered without calling tools.
func (a *Agent) step(ctx context.Context, n int, lim Limits, res *Result) (done bool, err error) {
	conv := a.conversation()
	tools := a.listTools(ctx, lim)
	req := &Request{System: a.System, Messages: conv.Messages, Tools: tools.specs, MaxTokens: a.MaxOutputTokens}
	if req.System == "" {
		req.System = conv.System
	}
	reply, err := a.Model.Generate(ctx, req, func(d Delta) {
		if d.Text != "" {
			a.emit(Event{Kind: EventText, Text: d.Text})
		}
	})
	if err != nil {
		return false, err
	}
	a.budget.addUsage(reply.Usage)
	a.emit(Event{Kind: EventStep, Step: n, Usage: reply.Usage})
	if reply.Model != "" && res.Model == "" {
		res.Model = reply.Model
	}
	reply.Message.Role = Assistant
	conv.Messages = append(conv.Messages, reply.Message)
	res.Stop = reply.Stop
	calls := reply.Message.ToolCalls()
	if len(calls) == 0 {
		res.Answer = reply.Message.Text()
		switch reply.Stop {
		case MaxTokens:
			a.emit(Event{Kind: EventWarning, Text: "the answer was cut at the reply's token limit"})
		case Refusal:
			a.emit(Event{Kind: EventWarning, Text: "the model refused to answer"})
		}
		return true, nil
	}
	if t := reply.Message.Text(); t != "" {
		res.Answer = t
	}
	results := a.runCalls(ctx, calls, tools, lim, res)
	conv.Messages = append(conv.Messages, Message{Role: Tool, Parts: results})
	return false, ctx.Err()
}
