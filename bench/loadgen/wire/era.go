package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// Era is a protocol era: Legacy (initialize, then a session; every
// revision from 2024-11-05 to 2025-11-25) or Modern (2026-07-28:
// stateless, the version and capabilities in each request's _meta, and on
// HTTP the Mcp-Method and Mcp-Name headers).
type Era string

const (
	Legacy Era = "legacy"
	Modern Era = "2026-07-28"

	// LegacyVersion is the version the load generator asks for in the
	// legacy era: the last revision of that era.
	LegacyVersion = "2025-11-25"
	// ModernVersion is the stateless revision.
	ModernVersion = "2026-07-28"
)

// ParseEra reads "legacy" or "2026-07-28" (also "modern").
func ParseEra(s string) (Era, error) {
	switch s {
	case "legacy":
		return Legacy, nil
	case "2026-07-28", "modern":
		return Modern, nil
	}
	return "", fmt.Errorf("unknown era %q (legacy or 2026-07-28)", s)
}

const (
	clientInfo = `{"name":"ferry-loadgen","version":"1"}`
	modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + ModernVersion +
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":` + clientInfo + `}`
	callHead = `{"jsonrpc":"2.0","id":`
	callName = `,"method":"tools/call","params":{"name":"`
	callArgs = `","arguments":{"message":"`

	// EchoTool is the tool a server under test has: it answers its string
	// argument message as its text content.
	EchoTool = "echo"
)

// AppendCall appends the tools/call of tool with message msg and id to b.
// Neither may need escaping: the harness's messages are [a-z0-9-] and a
// tool's name is checked by [CheckToolName].
func (e Era) AppendCall(b []byte, id int64, tool string, msg []byte) []byte {
	b = append(b, callHead...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, callName...)
	b = append(b, tool...)
	b = append(b, callArgs...)
	b = append(b, msg...)
	if e == Modern {
		return append(b, `"},`+modernMeta+`}}`...)
	}
	return append(b, `"}}}`...)
}

// CheckToolName accepts the names a request can carry unescaped, in its
// JSON and in the Mcp-Name header: the characters the specification
// recommends for tool names (A-Z, a-z, 0-9, _, -, .), 1 to 128 of them.
func CheckToolName(name string) error {
	ok := name != "" && len(name) <= 128
	for _, c := range []byte(name) {
		ok = ok && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.')
	}
	if !ok {
		return fmt.Errorf("tool name %q: want 1 to 128 of the characters A-Za-z0-9_.-", name)
	}
	return nil
}

// Version is the protocol version the era's requests carry.
func (e Era) Version() string {
	if e == Modern {
		return ModernVersion
	}
	return LegacyVersion
}

// handshake is the first request of a connection: initialize in the
// legacy era, server/discover in the modern one (which a modern server
// must implement, so it tells whether the server speaks the era at all).
func (e Era) handshake(id int64) []byte {
	if e == Modern {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{%s}}`, id, modernMeta)
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":%s}}`,
		id, LegacyVersion, clientInfo)
}

// initialized is the notification that ends the legacy handshake.
const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`

// checkHandshake reads the answer to handshake and returns the protocol
// version the connection speaks.
func (e Era) checkHandshake(msg []byte) (string, error) {
	var a struct {
		Error  json.RawMessage `json:"error"`
		Result struct {
			ProtocolVersion   string   `json:"protocolVersion"`
			SupportedVersions []string `json:"supportedVersions"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &a); err != nil {
		return "", fmt.Errorf("handshake answer: %w", err)
	}
	if a.Error != nil {
		return "", fmt.Errorf("handshake refused: %s", a.Error)
	}
	if e == Modern {
		if !slices.Contains(a.Result.SupportedVersions, ModernVersion) {
			return "", fmt.Errorf("server does not speak %s (supports %v)", ModernVersion, a.Result.SupportedVersions)
		}
		return ModernVersion, nil
	}
	if a.Result.ProtocolVersion == "" || a.Result.ProtocolVersion >= ModernVersion {
		return "", fmt.Errorf("initialize answered version %q", a.Result.ProtocolVersion)
	}
	return a.Result.ProtocolVersion, nil
}
