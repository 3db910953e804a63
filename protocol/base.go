package protocol

import "github.com/go-json-experiment/json/jsontext"

// Meta is the _meta object that requests, results, notifications and most
// protocol objects may carry.
type Meta map[string]any

// ProgressToken identifies a request's progress notifications: a string or
// an integer, kept as raw JSON so that it is echoed exactly.
type ProgressToken = jsontext.Value

// Cursor is an opaque pagination token.
type Cursor = string

// Role is the sender or recipient of messages and data.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Implementation describes an MCP client or server.
type Implementation struct {
	Name string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	// Description, Icons and WebsiteURL: 2025-11-25 and later.
	Description string `json:"description,omitempty"`
	Icons       []Icon `json:"icons,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// Icon is an image a client can show for a server, tool, prompt or resource
// (2025-11-25 and later).
type Icon struct {
	Src      string   `json:"src"`
	MIMEType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark".
	Theme string `json:"theme,omitempty"`
}

// Annotations tell the client how to use or show an object. (2024-11-05
// declares the same members inline, as its Annotated.)
type Annotations struct {
	Audience []Role `json:"audience,omitempty"`
	// Priority ranges from 0 (least important) to 1 (most important).
	// Zero is left out, as if unset: a priority of exactly 0 cannot be
	// sent.
	Priority float64 `json:"priority,omitzero"`
	// LastModified is an ISO 8601 time (2025-06-18 and later).
	LastModified string `json:"lastModified,omitempty"`
}

// ResultType values of stateless results.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// Cache scopes of stateless cacheable results.
const (
	CachePublic  = "public"
	CachePrivate = "private"
)

// ResultFields are the members every result may carry. ResultType is
// required from 2026-07-28 and absent before; a missing value means
// "complete".
type ResultFields struct {
	Meta       Meta   `json:"_meta,omitempty"`
	ResultType string `json:"resultType,omitempty"`
}

// CacheFields are the caching hints of stateless cacheable results
// (2026-07-28). TTLMs is a pointer because a zero TTL must still be sent.
type CacheFields struct {
	TTLMs      *int64 `json:"ttlMs,omitzero"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// RequestParams are the parameters of a request that carries nothing but
// its _meta (the schema's RequestParams): ping, server/discover and
// roots/list.
type RequestParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// NotificationParams are the parameters of a notification that carries
// nothing but its _meta (the schema's NotificationParams):
// notifications/initialized and the list_changed notifications of tools,
// prompts, resources and roots.
type NotificationParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// PaginatedParams are the parameters of a list request.
type PaginatedParams struct {
	Meta   Meta   `json:"_meta,omitempty"`
	Cursor Cursor `json:"cursor,omitempty"`
}

// EmptyResult is the result of requests that return nothing but success.
type EmptyResult struct {
	ResultFields
}

// ClientCapabilities are what a client supports. Legacy clients declare
// them once in initialize; stateless clients on every request.
type ClientCapabilities struct {
	Experimental map[string]any `json:"experimental,omitempty"`
	// Extensions declares optional extensions by name (2026-07-28).
	Extensions map[string]any   `json:"extensions,omitempty"`
	Roots      *RootsCapability `json:"roots,omitzero"`
	// Sampling is deprecated from 2026-07-28.
	Sampling *SamplingCapability `json:"sampling,omitzero"`
	// Elicitation: 2025-06-18 and later.
	Elicitation *ElicitationCapability `json:"elicitation,omitzero"`
	// Tasks: 2025-11-25 only (an extension from 2026-07-28).
	Tasks *ClientTasksCapability `json:"tasks,omitzero"`
}

// RootsCapability says the client can list roots.
type RootsCapability struct {
	// ListChanged: the client notifies changes of its roots (legacy).
	ListChanged bool `json:"listChanged,omitzero"`
}

// SamplingCapability says the client can sample its model.
//
// Its members are present-or-absent flags: a non-nil map, even empty, is
// sent (as {}) and declares the feature; nil leaves it out.
type SamplingCapability struct {
	// Context: the client honours includeContext other than "none".
	Context map[string]any `json:"context,omitzero"`
	// Tools: the client supports tools and toolChoice in sampling.
	Tools map[string]any `json:"tools,omitzero"`
}

// ElicitationCapability says the client can ask its user for input. An
// empty object means form mode only.
//
// Form and URL are present-or-absent flags: a non-nil map, even empty, is
// sent (as {}) and declares the mode; nil leaves it out.
type ElicitationCapability struct {
	Form map[string]any `json:"form,omitzero"`
	URL  map[string]any `json:"url,omitzero"`
}

// SupportsForm reports whether form-mode elicitation is supported: an
// empty capability object means form mode.
func (c *ElicitationCapability) SupportsForm() bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// SupportsURL reports whether URL-mode elicitation is supported.
func (c *ElicitationCapability) SupportsURL() bool { return c != nil && c.URL != nil }

// ServerCapabilities are what a server offers.
type ServerCapabilities struct {
	Experimental map[string]any `json:"experimental,omitempty"`
	// Extensions declares optional extensions by name (2026-07-28).
	Extensions map[string]any     `json:"extensions,omitempty"`
	Logging    *LoggingCapability `json:"logging,omitzero"`
	// Completions: 2025-03-26 and later.
	Completions *CompletionsCapability `json:"completions,omitzero"`
	Prompts     *PromptsCapability     `json:"prompts,omitzero"`
	Resources   *ResourcesCapability   `json:"resources,omitzero"`
	Tools       *ToolsCapability       `json:"tools,omitzero"`
	// Tasks: 2025-11-25 only (an extension from 2026-07-28).
	Tasks *ServerTasksCapability `json:"tasks,omitzero"`
}

// LoggingCapability says the server sends log messages.
type LoggingCapability struct{}

// CompletionsCapability says the server completes arguments.
type CompletionsCapability struct{}

// PromptsCapability says the server has prompts.
type PromptsCapability struct {
	ListChanged bool `json:"listChanged,omitzero"`
}

// ResourcesCapability says the server has resources.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitzero"`
	ListChanged bool `json:"listChanged,omitzero"`
}

// ToolsCapability says the server has tools.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitzero"`
}
