// Package protocol defines the messages of the Model Context Protocol, for
// every published revision from 2024-11-05 to 2026-07-28, as Go types that
// marshal to exactly the JSON the specification's schema describes.
//
// One Go type serves every revision: fields added by later revisions are
// optional and omitted when empty, so a value built for the stateless era
// (2026-07-28) is also a valid legacy message once the stateless-only fields
// are left unset. The server and client packages take care of that.
package protocol

import "slices"

// Protocol revisions.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestVersion is the newest revision ferry speaks.
	LatestVersion = Version20260728
	// LatestLegacyVersion is the newest revision with the initialize
	// handshake.
	LatestLegacyVersion = Version20251125
)

// supportedVersions lists the revisions, newest first. It is unexported
// so that no importer can change what ferry speaks; SupportedVersions
// hands out copies.
var supportedVersions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// SupportedVersions returns every revision ferry speaks, newest first.
// The slice is a fresh copy the caller may keep or change: those of one
// era are slices.DeleteFunc(SupportedVersions(), IsStateless) (legacy)
// or IsLegacy (stateless).
func SupportedVersions() []string { return slices.Clone(supportedVersions) }

// IsStateless reports whether v is a stateless (per-request _meta) revision:
// 2026-07-28 or later.
func IsStateless(v string) bool { return v >= Version20260728 }

// IsLegacy reports whether v is one of the legacy revisions ferry speaks,
// those with the initialize handshake and sessions.
func IsLegacy(v string) bool { return IsSupported(v) && !IsStateless(v) }

// IsSupported reports whether ferry speaks revision v.
func IsSupported(v string) bool { return slices.Contains(supportedVersions, v) }

// AtLeast reports whether revision v is min or newer. Revisions are dates,
// so they compare as strings.
func AtLeast(v, min string) bool { return v >= min }

// Reserved _meta keys.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID     = "io.modelcontextprotocol/subscriptionId"
	MetaProgressToken      = "progressToken"
	// MetaRelatedTask links a message to a task (2025-11-25 tasks).
	MetaRelatedTask = "io.modelcontextprotocol/related-task"
)
