package server

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
)

// The checks of what is registered. The Add methods panic when one fails,
// as http.Handle does for a bad pattern: a server that starts is one whose
// tools every client can call. A program that registers what it did not
// write itself (a gateway re-serving another server's tools) checks first
// with [CheckTool].

// CheckTool reports what would make [Server.AddTool] panic on t: a name
// outside the specification's rules, or an input schema that is not a
// JSON Schema object of type "object". A nil InputSchema is valid: it
// means {"type":"object"}.
func CheckTool(t *protocol.Tool) error {
	if err := checkToolName(t.Name); err != nil {
		return err
	}
	if len(t.InputSchema) > 0 {
		if err := checkObjectSchema(t.InputSchema); err != nil {
			return fmt.Errorf("server: tool %q: input schema: %w", t.Name, err)
		}
	}
	return nil
}

// checkToolName applies the rules both eras give tool names (2025-11-25
// and 2026-07-28, server/tools, "Tool Names"): "Tool names SHOULD be
// between 1 and 128 characters in length (inclusive)" and "The following
// SHOULD be the only allowed characters: uppercase and lowercase ASCII
// letters (A-Z, a-z), digits (0-9), underscore (_), hyphen (-), and dot
// (.)". ferry takes the SHOULDs as rules: a name outside them is a
// mistake that some client will trip on.
func checkToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("server: tool name %q: a tool name has 1 to 128 characters", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isNameByte(c) {
			return fmt.Errorf("server: tool name %q: %q is not allowed; tool names use A-Z, a-z, 0-9, '_', '-' and '.'", name, rune(c))
		}
	}
	return nil
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// checkObjectSchema checks that a tool's input schema is an object schema:
// "Tool arguments are always JSON objects, so type: "object" is required
// at the root" (2026-07-28 schema, Tool.inputSchema; the legacy schemas
// have "type": {"const": "object"}).
func checkObjectSchema(schema jsontext.Value) error {
	var root struct {
		Type jsontext.Value `json:"type"`
	}
	if err := json.Unmarshal(schema, &root); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if string(root.Type) != `"object"` {
		if len(root.Type) == 0 {
			return errors.New(`the root has no "type": a tool's arguments are an object, so it must be "object"`)
		}
		return fmt.Errorf(`the root's "type" is %s: a tool's arguments are an object, so it must be "object" (use a struct as the input type)`, root.Type)
	}
	return nil
}

// checkResourceURI checks that a resource's URI is absolute, as a
// resource's "unique identifier" must be to mean the same to every client:
// it starts with a scheme (RFC 3986: scheme ":" ...).
func checkResourceURI(uri string) error {
	if !hasScheme(uri) {
		return fmt.Errorf("server: resource URI %q is not absolute: it must start with a scheme, such as file:// or https://", uri)
	}
	return nil
}

// checkTemplateURI checks the start of a resource template the same way,
// unless it starts with a variable (which may hold the scheme).
func checkTemplateURI(tmpl string) error {
	if strings.HasPrefix(tmpl, "{") || hasScheme(tmpl) {
		return nil
	}
	return fmt.Errorf("server: resource template %q is not absolute: it must start with a scheme, such as file:// or https://", tmpl)
}

// hasScheme reports whether s starts with an RFC 3986 scheme and its
// colon: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":".
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// mustHandler panics when a handler is nil: every call would fail.
func mustHandler(isNil bool, what string) {
	if isNil {
		panic("server: " + what + ": nil handler")
	}
}
