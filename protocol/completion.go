package protocol

// Reference types of completion/complete.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteParams are the parameters of completion/complete.
type CompleteParams struct {
	Meta     Meta             `json:"_meta,omitempty"`
	Ref      CompleteRef      `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	// Context: 2025-06-18 and later.
	Context *CompleteContext `json:"context,omitzero"`
}

// CompleteRef names what is being completed: a prompt (PromptReference) or
// a resource template (ResourceTemplateReference, ResourceReference before
// 2025-06-18).
type CompleteRef struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	URI   string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext holds arguments already resolved.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is the result of completion/complete.
type CompleteResult struct {
	ResultFields
	Completion Completion `json:"completion"`
}

// Completion lists completion values (at most 100).
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitzero"`
	HasMore bool     `json:"hasMore,omitzero"`
}
