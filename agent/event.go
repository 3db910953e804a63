package agent

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of event.
const (
	// EventText: Text is a piece of the model's answer as it streams.
	EventText EventKind = iota + 1
	// EventToolStart: the call in Call starts (approved, or not run:
	// see Call.Denied and Call.Error at its EventToolEnd).
	EventToolStart
	// EventToolProgress: Progress is a progress notification of Call.
	EventToolProgress
	// EventToolEnd: Call finished; Call.Duration, Call.Result and
	// Call.Error say how.
	EventToolEnd
	// EventStep: a model request of the turn ended; Step is its number
	// and Usage its tokens.
	EventStep
	// EventUsage: the turn ended; Usage is its total (tool calls' sampling
	// included).
	EventUsage
	// EventWarning: Text warns of something the user should know (tool
	// schemas crowding the context, a server that failed to list its
	// tools, a reply cut at its token limit).
	EventWarning
	// EventToolsChanged: the tool list changed since the last step;
	// Added and Removed name the tools.
	EventToolsChanged
	// EventSampling: a server's sampling request was answered, or
	// refused (Sampling says which).
	EventSampling
)

// Event is something that happened during a turn. Events are delivered
// one at a time, in order, to [Agent.OnEvent].
type Event struct {
	Kind     EventKind
	Text     string
	Call     *CallRecord
	Progress *protocol.ProgressParams
	Step     int
	Usage    Usage
	Added    []string
	Removed  []string
	Sampling *SamplingRecord
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
	// Cut says the result was cut to the size limit.
	Cut      bool          `json:"cut,omitzero"`
	Started  time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
	// Millis is Duration in milliseconds.
	Millis int64 `json:"ms"`
}

// SamplingRecord is a server's sampling request and how it went.
type SamplingRecord struct {
	Server string
	// Request is the server's request.
	Request *protocol.CreateMessageParams
	// Refused is why the request was not answered, or "".
	Refused  string
	Text     string
	Stop     StopReason
	Usage    Usage
	Duration time.Duration
}
