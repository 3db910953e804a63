package protocol

// Resource is a piece of data a server offers, identified by its URI.
type Resource struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the size in bytes, when known. Zero is left out, as if
	// unknown.
	Size        int64        `json:"size,omitzero"`
	Annotations *Annotations `json:"annotations,omitzero"`
	// Icons: 2025-11-25 and later.
	Icons []Icon `json:"icons,omitempty"`
	// Meta: 2025-06-18 and later.
	Meta Meta `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	// Title is a name for people to read (2025-06-18 and later).
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitzero"`
	// Icons: 2025-11-25 and later.
	Icons []Icon `json:"icons,omitempty"`
	// Meta: 2025-06-18 and later.
	Meta Meta `json:"_meta,omitempty"`
}

// ListResourcesResult is the result of resources/list.
type ListResourcesResult struct {
	ResultFields
	CacheFields
	Resources  []Resource `json:"resources"`
	NextCursor Cursor     `json:"nextCursor,omitempty"`
}

// ListResourceTemplatesResult is the result of resources/templates/list.
type ListResourceTemplatesResult struct {
	ResultFields
	CacheFields
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        Cursor             `json:"nextCursor,omitempty"`
}

// ReadResourceParams are the parameters of resources/read.
type ReadResourceParams struct {
	Meta Meta   `json:"_meta,omitempty"`
	URI  string `json:"uri"`
	MRTRParams
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	ResultFields
	CacheFields
	Contents []ResourceContents `json:"contents"`
}

// SubscribeParams are the parameters of resources/subscribe and
// resources/unsubscribe (legacy).
type SubscribeParams struct {
	Meta Meta   `json:"_meta,omitempty"`
	URI  string `json:"uri"`
}

// ResourceUpdatedParams are the parameters of
// notifications/resources/updated.
type ResourceUpdatedParams struct {
	Meta Meta   `json:"_meta,omitempty"`
	URI  string `json:"uri"`
}
