package protocol

import (
	"github.com/go-json-experiment/json/jsontext"
)

// InputRequiredResult is the interim result of a multi round-trip request
// (2026-07-28): the server needs the client to answer InputRequests, and to
// retry the original request with the answers and RequestState.
type InputRequiredResult struct {
	ResultFields
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	RequestState  string                  `json:"requestState,omitempty"`
}

// InputRequest is one request the server needs answered: an
// elicitation/create, sampling/createMessage or roots/list request without
// a JSON-RPC envelope.
type InputRequest struct {
	Method string `json:"method"`
	// Params are the request's params; nil leaves them out, while an
	// explicit {} is sent.
	Params jsontext.Value `json:"params,omitzero"`
}

// InputResponseParams are the MRTR members shared by retried requests.
type InputResponseParams struct {
	Meta Meta `json:"_meta,omitempty"`
	MRTRParams
}
