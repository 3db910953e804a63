package protocol

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// CreateMessageParams are the parameters of sampling/createMessage: the
// server asks the client's model for a message.
type CreateMessageParams struct {
	Meta             Meta              `json:"_meta,omitempty"`
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitzero"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	// IncludeContext is "none", "thisServer" or "allServers" (the last
	// two deprecated).
	IncludeContext string         `json:"includeContext,omitempty"`
	Temperature    *float64       `json:"temperature,omitzero"`
	MaxTokens      int64          `json:"maxTokens"`
	StopSequences  []string       `json:"stopSequences,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	// Tools and ToolChoice: 2025-11-25 and later.
	Tools      []Tool      `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitzero"`
	// Task asks for task-augmented execution (2025-11-25 only).
	Task *TaskMetadata `json:"task,omitzero"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content SamplingContent `json:"content"`
	// Meta: 2025-11-25 and later.
	Meta Meta `json:"_meta,omitempty"`
}

// SamplingContent is the content of a sampling message: one block, or
// (2025-11-25 and later) several. One block is sent as an object, as every
// revision accepts.
type SamplingContent []Content

// MarshalJSONTo writes a single block as an object and several as an array.
func (sc SamplingContent) MarshalJSONTo(enc *jsontext.Encoder) error {
	if len(sc) == 1 {
		return json.MarshalEncode(enc, &sc[0])
	}
	return json.MarshalEncode(enc, []Content(sc))
}

// UnmarshalJSONFrom accepts an object or an array of blocks.
func (sc *SamplingContent) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == '[' {
		var blocks []Content
		if err := json.UnmarshalDecode(dec, &blocks); err != nil {
			return err
		}
		*sc = blocks
		return nil
	}
	var c Content
	if err := json.UnmarshalDecode(dec, &c); err != nil {
		return err
	}
	*sc = SamplingContent{c}
	return nil
}

// ModelPreferences guide the client's choice of model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitzero"`
	SpeedPriority        *float64    `json:"speedPriority,omitzero"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitzero"`
}

// ModelHint suggests a model by name.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ToolChoice says how the model may use the tools given to it.
type ToolChoice struct {
	// Mode is "auto", "required" or "none".
	Mode string `json:"mode,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Meta    Meta            `json:"_meta,omitempty"`
	Role    Role            `json:"role"`
	Content SamplingContent `json:"content"`
	Model   string          `json:"model"`
	// StopReason is "endTurn", "stopSequence", "maxTokens", "toolUse" or
	// another value.
	StopReason string `json:"stopReason,omitempty"`
}
