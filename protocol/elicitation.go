package protocol

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Elicitation modes.
const (
	ElicitForm = "form"
	ElicitURL  = "url"
)

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitParams are the parameters of elicitation/create (2025-06-18 and
// later): the server asks the user, through the client, for structured
// input (form mode) or to visit a URL (url mode, 2025-11-25 and later).
// From 2026-07-28 it is sent as an [InputRequest] and has no _meta.
type ElicitParams struct {
	Meta Meta `json:"_meta,omitempty"`
	// Mode is "form" (the default when empty) or "url".
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message"`
	// RequestedSchema is the flat object schema of the form (form mode;
	// required there). Nil leaves it out.
	RequestedSchema jsontext.Value `json:"requestedSchema,omitzero"`
	// URL is the page to visit (url mode).
	URL string `json:"url,omitempty"`
	// ElicitationID identifies a url-mode elicitation (2025-11-25 only).
	ElicitationID string `json:"elicitationId,omitempty"`
	// Task asks for task-augmented execution (2025-11-25 only).
	Task *TaskMetadata `json:"task,omitzero"`
}

// Defaults returns the default values the requested form schema gives
// its fields (SEP-1034), by property name, for a client to pre-populate
// its form with: "Clients that support defaults SHOULD pre-populate form
// fields with these values." The map is never nil; fields without a
// default are absent. It fails only when RequestedSchema is not a JSON
// object schema.
func (p *ElicitParams) Defaults() (map[string]any, error) {
	out := map[string]any{}
	if len(p.RequestedSchema) == 0 {
		return out, nil
	}
	var s struct {
		Properties map[string]map[string]jsontext.Value `json:"properties"`
	}
	if err := json.Unmarshal(p.RequestedSchema, &s); err != nil {
		return out, err
	}
	for name, prop := range s.Properties {
		raw, ok := prop["default"]
		if !ok {
			continue
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return out, err
		}
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f) // 30, not 30.0, for an integer field
		}
		out[name] = v
	}
	return out, nil
}

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Meta Meta `json:"_meta,omitempty"`
	// Action is "accept", "decline" or "cancel".
	Action string `json:"action"`
	// Content holds the submitted form (accept only). A non-nil empty map
	// is sent as {}: the user accepted a form with nothing to fill in.
	Content map[string]any `json:"content,omitzero"`
}

// ElicitationCompleteParams are the parameters of
// notifications/elicitation/complete (2025-11-25 only).
type ElicitationCompleteParams struct {
	Meta          Meta   `json:"_meta,omitempty"`
	ElicitationID string `json:"elicitationId"`
}

// URLElicitationRequiredData is the data of a -32042 error (2025-11-25).
type URLElicitationRequiredData struct {
	Elicitations []ElicitParams `json:"elicitations"`
}
