package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// EventKind says what an [Event] reports. In JSON it is the name in
// its constant's comment ("text", "tool_asked", ...).
type EventKind int

// The kinds of event. A tool call the model asks for is reported as
// tool_asked, then either tool_approved, tool_started, tool_progress
// (any number) and tool_finished, or tool_denied and tool_finished, or
// (an unknown tool, arguments that are not an object) tool_finished
// alone, its Call.Error saying why.
const (
	// EventText ("text"): Text is a piece of the model's answer as it
	// streams.
	EventText EventKind = iota + 1
	// EventToolStart ("tool_started"): the approved call in Call starts.
	EventToolStart
	// EventToolProgress ("tool_progress"): Progress is a progress
	// notification of Call.
	EventToolProgress
	// EventToolEnd ("tool_finished"): Call finished, or was not run;
	// Call.Millis, Call.Result, Call.Error and Call.Denied say how.
	EventToolEnd
	// EventStep ("step"): a model request of the turn ended; Step is its
	// number and Usage its tokens.
	EventStep
	// EventUsage ("usage"): the turn ended; Usage is its total (tool
	// calls' sampling included).
	EventUsage
	// EventWarning ("warning"): Text warns of something the user should
	// know (tools left out or crowding the context, a server that failed
	// to list its tools, a reply cut at its token limit).
	EventWarning
	// EventToolsChanged ("tools_changed"): the tool list changed since
	// the last step; Added and Removed name the tools.
	EventToolsChanged
	// EventSampling ("sampling"): a server's sampling request was
	// answered, or refused; Sampling says which.
	EventSampling
	// EventToolAsked ("tool_asked"): the model asked for the call in
	// Call (its Name as the model wrote it until it is resolved).
	EventToolAsked
	// EventToolApproved ("tool_approved"): the policy let Call run.
	EventToolApproved
	// EventToolDenied ("tool_denied"): the policy refused Call;
	// Call.Error says why, Call.Unasked that no one could be asked.
	EventToolDenied
	// EventElicitation ("elicitation"): a server asked the user a
	// question ([Agent.Elicit]); Elicitation says what and the answer.
	EventElicitation
	// EventError ("error"): Error says why the turn, or the program
	// running it, failed. [Agent.Run] returns the error rather than
	// emitting it: a program that streams the events (ferry run --format
	// ndjson) emits it, then EventResult.
	EventError
	// EventResult ("result"): Result is the turn's outcome, the last
	// event of a program that streams them.
	EventResult
)

var eventNames = [...]string{
	EventText: "text", EventToolStart: "tool_started", EventToolProgress: "tool_progress", EventToolEnd: "tool_finished",
	EventStep: "step", EventUsage: "usage", EventWarning: "warning", EventToolsChanged: "tools_changed",
	EventSampling: "sampling", EventToolAsked: "tool_asked", EventToolApproved: "tool_approved", EventToolDenied: "tool_denied",
	EventElicitation: "elicitation", EventError: "error", EventResult: "result",
}

// String is the kind's name.
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// MarshalText writes the kind's name.
func (k EventKind) MarshalText() ([]byte, error) {
	if k <= 0 || int(k) >= len(eventNames) {
		return nil, fmt.Errorf("agent: unknown event kind %d", int(k))
	}
	return []byte(eventNames[k]), nil
}

// UnmarshalText reads a kind's name.
func (k *EventKind) UnmarshalText(b []byte) error {
	for i, n := range eventNames {
		if n != "" && n == string(b) {
			*k = EventKind(i)
			return nil
		}
	}
	return fmt.Errorf("agent: unknown event kind %q", b)
}

// Event is something that happened during a turn. Events are delivered
// one at a time, in order, to [Agent.OnEvent]. Its JSON is one line of
// ferry run --format ndjson: "kind" and the members the kind sets.
type Event struct {
	Kind        EventKind                `json:"kind"`
	Text        string                   `json:"text,omitempty"`
	Call        *CallRecord              `json:"call,omitempty"`
	Progress    *protocol.ProgressParams `json:"progress,omitempty"`
	Step        int                      `json:"step,omitzero"`
	Usage       Usage                    `json:"usage,omitzero"`
	Added       []string                 `json:"added,omitempty"`
	Removed     []string                 `json:"removed,omitempty"`
	Sampling    *SamplingRecord          `json:"sampling,omitempty"`
	Elicitation *ElicitationRecord       `json:"elicitation,omitempty"`
	Error       *Failure                 `json:"error,omitempty"`
	Result      *Result                  `json:"result,omitempty"`
}

// Failure says why a turn, or the program running it, failed.
type Failure struct {
	Message string `json:"message"`
	// Limit is "steps", "tokens" or "time" when a limit stopped the
	// turn (a [LimitError]).
	Limit string `json:"limit,omitempty"`
	// Code and Kind are the exit code of the program reporting the
	// failure and its name, when it has them (ferry run: 2 and "error"
	// for a limit).
	Code int    `json:"code,omitzero"`
	Kind string `json:"kind,omitempty"`
}

// NewFailure describes err (nil for nil).
func NewFailure(err error) *Failure {
	if err == nil {
		return nil
	}
	f := &Failure{Message: err.Error()}
	var le *LimitError
	if errors.As(err, &le) {
		f.Limit = le.Limit
	}
	return f
}

// CallRecord is a tool call of a turn and its outcome.
type CallRecord struct {
	// ID is the model's identifier of the call.
	ID string `json:"id"`
	// Name is the tool's name in the host's list (server__tool); Server
	// and Tool are the server and its name for the tool.
	Name   string `json:"name"`
	Server string `json:"server,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Arguments are the call's arguments: a JSON object, or a JSON string
	// holding what the model wrote when it was not one.
	Arguments jsontext.Value `json:"arguments"`
	// Result summarises what the model was given (the start of its
	// text).
	Result string `json:"result,omitempty"`
	// Error says why the call failed: the tool said so (IsError), it was
	// denied, its arguments were invalid, the server failed.
	Error   string `json:"error,omitempty"`
	IsError bool   `json:"isError,omitzero"`
	Denied  bool   `json:"denied,omitzero"`
	// Cut says the result was over its budget: the model was given its
	// head and its tail, and Kept is the file that holds it whole.
	Cut  bool   `json:"cut,omitzero"`
	Kept string `json:"kept,omitempty"`
	// Unasked says the call was denied because it needed the user's
	// approval and there was no one to ask (approval mode ask without a
	// terminal).
	Unasked  bool          `json:"unasked,omitzero"`
	Started  time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
	// Millis is Duration in milliseconds.
	Millis int64 `json:"ms"`
}

// SamplingRecord is a server's sampling request and how it went.
type SamplingRecord struct {
	Server string `json:"server"`
	// Request is the server's request.
	Request *protocol.CreateMessageParams `json:"-"`
	// RequestedMaxTokens is the reply's cap the server asked for,
	// MaxTokens the one the model was given (lowered to the host's
	// limits).
	RequestedMaxTokens int64 `json:"requestedMaxTokens"`
	MaxTokens          int64 `json:"maxTokens,omitzero"`
	// Refused is why the request was not answered, or "". Unasked says
	// it needed the user's approval and there was no one to ask.
	Refused  string        `json:"refused,omitempty"`
	Unasked  bool          `json:"unasked,omitzero"`
	Text     string        `json:"text,omitempty"`
	Stop     StopReason    `json:"stopReason,omitempty"`
	Usage    Usage         `json:"usage"`
	Duration time.Duration `json:"-"`
	// Millis is Duration in milliseconds.
	Millis int64 `json:"ms"`
}

// ElicitationRecord is a server's question to the user and the answer
// (what the user filled in is left out: it may be a secret).
type ElicitationRecord struct {
	Server string `json:"server"`
	// Mode is "form" or "url"; URL is the page of a url-mode question.
	Mode    string `json:"mode"`
	Message string `json:"message"`
	URL     string `json:"url,omitempty"`
	// Action is "accept", "decline" or "cancel"; Error says why there is
	// no answer.
	Action string `json:"action,omitempty"`
	Error  string `json:"error,omitempty"`
}
