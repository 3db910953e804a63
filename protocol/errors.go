package protocol

// The error codes MCP defines, beside JSON-RPC's own (jsonrpc.CodeParseError
// and the others).
const (
	// CodeResourceNotFound is the legacy (2025-11-25 and earlier) code for an
	// unknown resource. Stateless revisions use jsonrpc.CodeInvalidParams
	// instead.
	CodeResourceNotFound = -32002
	// CodeURLElicitationRequired is the 2025-11-25 code for a request that
	// needs an out-of-band (URL mode) elicitation first.
	CodeURLElicitationRequired = -32042

	// "-32020 to -32099 — reserved for the MCP specification."
	CodeHeaderMismatch                  = -32020
	CodeMissingRequiredClientCapability = -32021
	CodeUnsupportedProtocolVersion      = -32022
)
