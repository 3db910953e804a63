package protocol

import "github.com/go-json-experiment/json/jsontext"

// Tool is a tool a server offers.
type Tool struct {
	Name string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's arguments (an object
	// schema). It must be set: nil is sent as null, which no revision
	// accepts; {"type":"object"} is the schema of no arguments.
	InputSchema jsontext.Value `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema of the tool's
	// structuredContent (2025-06-18 and later). Nil leaves it out.
	OutputSchema jsontext.Value `json:"outputSchema,omitzero"`
	// Annotations: 2025-03-26 and later.
	Annotations *ToolAnnotations `json:"annotations,omitzero"`
	// Execution: 2025-11-25 only (tasks are an extension from 2026-07-28).
	Execution *ToolExecution `json:"execution,omitzero"`
	// Icons: 2025-11-25 and later.
	Icons []Icon `json:"icons,omitempty"`
	// Meta: 2025-06-18 and later.
	Meta Meta `json:"_meta,omitempty"`
}

// ToolAnnotations are hints about a tool's behaviour. The hints are
// pointers because their defaults are not all false (destructiveHint and
// openWorldHint default to true).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  *bool  `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

// ToolExecution says whether a tool runs as a task (2025-11-25).
type ToolExecution struct {
	// TaskSupport is "forbidden" (the default), "optional" or "required".
	TaskSupport string `json:"taskSupport,omitempty"`
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	ResultFields
	CacheFields
	Tools      []Tool `json:"tools"`
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// CallToolParams are the parameters of tools/call.
type CallToolParams struct {
	Meta Meta   `json:"_meta,omitempty"`
	Name string `json:"name"`
	// Arguments are the tool's arguments, a JSON object; nil leaves them
	// out.
	Arguments jsontext.Value `json:"arguments,omitzero"`
	MRTRParams
	// Task asks for task-augmented execution (2025-11-25 only).
	Task *TaskMetadata `json:"task,omitzero"`
}

// MRTRParams are the members a client adds when it retries a request after
// an [InputRequiredResult] (2026-07-28).
type MRTRParams struct {
	InputResponses map[string]jsontext.Value `json:"inputResponses,omitempty"`
	RequestState   string                    `json:"requestState,omitempty"`
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	ResultFields
	Content []Content `json:"content"`
	// StructuredContent is the tool's structured output, matching its
	// OutputSchema (an object before 2026-07-28, any JSON value since).
	// Nil leaves it out; any value set is sent, even [], "" or null,
	// which 2026-07-28 allows as output.
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	IsError           bool           `json:"isError,omitzero"`
}
