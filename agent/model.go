package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"
)

// Model is a language model behind a provider's API. The provider
// packages implement it.
type Model interface {
	// Generate sends the request and returns the model's reply, passing
	// each piece of text to stream as it arrives (stream may be nil).
	// The reply's message has the Assistant role.
	Generate(ctx context.Context, req *Request, stream func(Delta)) (*Reply, error)
}

// Request is what a [Model] is asked.
type Request struct {
	// System is the system prompt.
	System   string
	Messages []Message
	Tools    []ToolSpec
	// ToolChoice is "auto" (or empty), "required" or "none".
	ToolChoice string
	// MaxTokens bounds the reply (0: the provider's default).
	MaxTokens     int64
	Temperature   *float64
	StopSequences []string
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	// Name is within the providers' rules (see [Names]).
	Name        string
	Description string
	// Schema is the JSON Schema of the arguments, an object schema.
	Schema jsontext.Value
}

// Delta is a piece of a reply as it streams.
type Delta struct {
	Text string
}

// Reply is a model's answer.
type Reply struct {
	Message Message
	Stop    StopReason
	Usage   Usage
	// Model is the model that answered, as the provider names it.
	Model string
}

// StopReason says why the model stopped. The values are MCP's (those of a
// sampling result's stopReason), which the providers' reasons map to.
type StopReason string

// The stop reasons.
const (
	// EndTurn: OpenAI "stop", Anthropic "end_turn".
	EndTurn StopReason = "endTurn"
	// ToolUse: OpenAI "tool_calls" (and "function_call"), Anthropic
	// "tool_use".
	ToolUse StopReason = "toolUse"
	// MaxTokens: OpenAI "length", Anthropic "max_tokens".
	MaxTokens StopReason = "maxTokens"
	// StopSequence: Anthropic "stop_sequence".
	StopSequence StopReason = "stopSequence"
	// Refusal: OpenAI "content_filter", Anthropic "refusal".
	Refusal StopReason = "refusal"
)

// Usage counts tokens.
type Usage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
}

// Total is input plus output.
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// Add returns u plus v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// ErrorKind classifies a model's failure, for exit codes and messages.
type ErrorKind int

// The kinds of [ModelError].
const (
	// ModelFailed: the provider answered with an error (a bad request,
	// an overloaded server, a stream that broke off).
	ModelFailed ErrorKind = iota
	// ModelAuth: the provider refused the credentials (HTTP 401 or 403),
	// or none were given.
	ModelAuth
	// ModelUnreachable: the provider could not be reached.
	ModelUnreachable
)

// ModelError is a failure of a provider.
type ModelError struct {
	Provider string
	Kind     ErrorKind
	// Status is the HTTP status, when the provider answered.
	Status int
	Err    error
}

func (e *ModelError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %v", e.Provider, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

func (e *ModelError) Unwrap() error { return e.Err }

// ModelErrorKind returns the kind of the *ModelError in err's chain, and
// whether there is one.
func ModelErrorKind(err error) (ErrorKind, bool) {
	var me *ModelError
	if errors.As(err, &me) {
		return me.Kind, true
	}
	return 0, false
}

// ClassifyTransport makes a failure to get an answer from a provider a
// *ModelError: unreachable when no connection could be made (refused,
// no such host, timed out dialling), failed otherwise. The provider
// packages use it.
func ClassifyTransport(provider string, err error) error {
	kind := ModelFailed
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &dns) || errors.As(err, &op) && op.Op == "dial" {
		kind = ModelUnreachable
	}
	return &ModelError{Provider: provider, Kind: kind, Err: err}
}

// ClassifyStatus makes a provider's answer with an HTTP error status a
// *ModelError: a refusal of the credentials (401, 403) is ModelAuth, any
// other status ModelFailed; msg is what the provider said, or the
// status's text when it said nothing. The provider packages use it.
func ClassifyStatus(provider string, status int, msg string) error {
	kind := ModelFailed
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		kind = ModelAuth
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &ModelError{Provider: provider, Kind: kind, Status: status, Err: errors.New(msg)}
}
