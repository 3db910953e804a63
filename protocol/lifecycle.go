package protocol

import (
	"github.com/ferrymcp/ferry/jsonrpc"
)

// InitializeParams are the parameters of initialize, the legacy handshake.
type InitializeParams struct {
	Meta            Meta               `json:"_meta,omitempty"`
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
}

// InitializeResult is the result of initialize.
type InitializeResult struct {
	ResultFields
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
}

// DiscoverResult is the result of server/discover.
type DiscoverResult struct {
	ResultFields
	CacheFields
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
}

// RequestMeta is the typed view of a stateless request's _meta: the
// per-request protocol fields of 2026-07-28.
type RequestMeta struct {
	ProtocolVersion    string              `json:"io.modelcontextprotocol/protocolVersion,omitempty"`
	ClientInfo         *Implementation     `json:"io.modelcontextprotocol/clientInfo,omitzero"`
	ClientCapabilities *ClientCapabilities `json:"io.modelcontextprotocol/clientCapabilities,omitzero"`
	LogLevel           LoggingLevel        `json:"io.modelcontextprotocol/logLevel,omitempty"`
	ProgressToken      ProgressToken       `json:"progressToken,omitzero"`
}

// ResultMeta is the typed view of a stateless result's _meta (2026-07-28):
// the schema's ResultMetaObject and SubscriptionsListenResultMetaObject.
// Decode a result's _meta into it, or marshal it and set the members into
// [Meta] under the same keys.
type ResultMeta struct {
	// ServerInfo identifies the server; servers should send it on every
	// result, since stateless peers have no initialize to learn it from.
	ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo,omitzero"`
	// SubscriptionID, only in a [SubscriptionsListenResult], is the
	// JSON-RPC id of the subscriptions/listen request whose stream the
	// result closes, so that the client can tell which subscription ended.
	SubscriptionID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId,omitzero"`
}

// NotificationMeta is the typed view of a stateless notification's _meta
// (2026-07-28): the schema's NotificationMetaObject.
type NotificationMeta struct {
	// SubscriptionID is the JSON-RPC id of the subscriptions/listen
	// request whose stream carries the notification. Servers must set it
	// on every notification sent on a subscription stream; it is absent
	// on request-scoped notifications such as progress.
	SubscriptionID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId,omitzero"`
}

// CancelledParams are the parameters of notifications/cancelled.
type CancelledParams struct {
	Meta Meta `json:"_meta,omitempty"`
	// RequestID is the request to cancel. It is required except in
	// 2025-11-25, where a task is cancelled with tasks/cancel instead; the
	// zero ID is left out rather than sent as null, which no revision
	// accepts.
	RequestID jsonrpc.ID `json:"requestId,omitzero"`
	Reason    string     `json:"reason,omitempty"`
}

// ProgressParams are the parameters of notifications/progress.
type ProgressParams struct {
	Meta          Meta          `json:"_meta,omitempty"`
	ProgressToken ProgressToken `json:"progressToken"`
	Progress      float64       `json:"progress"`
	// Total is the total to reach, when known; zero is left out.
	Total float64 `json:"total,omitzero"`
	// Message describes the progress (2025-03-26 and later).
	Message string `json:"message,omitempty"`
}

// UnsupportedProtocolVersionData is the data of a -32022 error.
type UnsupportedProtocolVersionData struct {
	Supported []string `json:"supported"`
	Requested string   `json:"requested"`
}

// MissingRequiredClientCapabilityData is the data of a -32021 error.
type MissingRequiredClientCapabilityData struct {
	RequiredCapabilities ClientCapabilities `json:"requiredCapabilities"`
}
