package protocol

// Prompt is a prompt template a server offers.
type Prompt struct {
	Name string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	// Icons: 2025-11-25 and later.
	Icons []Icon `json:"icons,omitempty"`
	// Meta: 2025-06-18 and later.
	Meta Meta `json:"_meta,omitempty"`
}

// PromptArgument is an argument a prompt accepts.
type PromptArgument struct {
	Name string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitzero"`
}

// ListPromptsResult is the result of prompts/list.
type ListPromptsResult struct {
	ResultFields
	CacheFields
	Prompts    []Prompt `json:"prompts"`
	NextCursor Cursor   `json:"nextCursor,omitempty"`
}

// GetPromptParams are the parameters of prompts/get.
type GetPromptParams struct {
	Meta      Meta              `json:"_meta,omitempty"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	MRTRParams
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	ResultFields
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}
