// Package mcpheader implements the HTTP header mirroring of 2026-07-28
// Streamable HTTP: the value encoding of Mcp-Name and Mcp-Param-{Name},
// and the x-mcp-header annotations of tool input schemas that name which
// arguments are mirrored. Servers use it to check headers against the
// body, clients to produce them.
package mcpheader

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Prefix is the prefix of mirrored tool parameter headers.
const Prefix = "Mcp-Param-"

// Encode encodes a value for Mcp-Name or Mcp-Param-{Name}: as is when it
// is plain visible ASCII, else in the "=?base64?…?=" form ("When a value
// cannot be safely represented as a plain ASCII header value ... clients
// MUST use Base64 encoding"; "clients MUST also Base64-encode any
// plain-ASCII value that matches the sentinel pattern").
func Encode(v string) string {
	safe := v != "" && v[0] != ' ' && v[0] != '\t' && v[len(v)-1] != ' ' && v[len(v)-1] != '\t'
	for i := 0; safe && i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			safe = false
		}
	}
	if safe && !(strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=")) {
		return v
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
}

// Decode checks a received header value's characters and decodes the
// "=?base64?…?=" form.
func Decode(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return "", fmt.Errorf("invalid character 0x%02x", c)
		}
	}
	if len(v) >= len("=?base64??=") && strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") {
		b, err := base64.StdEncoding.DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil {
			return "", errors.New("invalid base64 value")
		}
		return string(b), nil
	}
	return v, nil
}

// Param is a tool argument mirrored into a header.
type Param struct {
	// Header is the canonical header name, e.g. "Mcp-Param-Region".
	Header string
	// Path is the chain of properties from the schema root.
	Path []string
}

// Params returns the mirrored parameters an input schema declares, or an
// error when an annotation breaks the rules ("Clients using the
// Streamable HTTP transport MUST reject tool definitions where any
// x-mcp-header value violates these constraints").
func Params(schema jsontext.Value) ([]Param, error) {
	if len(schema) == 0 || !bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
		return nil, nil
	}
	var root map[string]any
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, err
	}
	var out []Param
	if err := collect(root, nil, true, &out); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, p := range out {
		if seen[p.Header] {
			return nil, fmt.Errorf("x-mcp-header %q is used twice", strings.TrimPrefix(p.Header, Prefix))
		}
		seen[p.Header] = true
	}
	return out, nil
}

// collect walks the schema; reachable is true while the chain from the
// root is made of "properties" steps only.
func collect(schema map[string]any, path []string, reachable bool, out *[]Param) error {
	if v, ok := schema["x-mcp-header"]; ok {
		name, isString := v.(string)
		switch {
		case !reachable || len(path) == 0:
			return fmt.Errorf("x-mcp-header at %q is not reachable through properties alone", strings.Join(path, "."))
		case !isString || !isToken(name):
			return fmt.Errorf("x-mcp-header %v of %q is not a valid header name", v, strings.Join(path, "."))
		}
		switch t, _ := schema["type"].(string); t {
		case "string", "integer", "boolean":
		default:
			return fmt.Errorf("x-mcp-header %q annotates %q, of type %q: only string, integer and boolean parameters may be mirrored", name, strings.Join(path, "."), t)
		}
		*out = append(*out, Param{Header: canonicalKey(Prefix + name), Path: path})
	}
	for key, v := range schema {
		switch sub := v.(type) {
		case map[string]any:
			if key == "properties" {
				for name, ps := range sub {
					if m, ok := ps.(map[string]any); ok {
						if err := collect(m, append(append([]string(nil), path...), name), reachable, out); err != nil {
							return err
						}
					}
				}
			} else if err := collect(sub, path, false, out); err != nil {
				return err
			}
		case []any:
			for _, it := range sub {
				if m, ok := it.(map[string]any); ok {
					if err := collect(m, path, false, out); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// isToken reports whether s is an HTTP field-name token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// Lookup returns the argument value at p's path, or false when there is
// none (or it is null: "Parameter value is null: Client MUST omit the
// header").
func Lookup(args jsontext.Value, p Param) (jsontext.Value, bool) {
	v := args
	for _, step := range p.Path {
		var ok bool
		if v, ok, _ = jsonrpc2.Member(v, step); !ok {
			return nil, false
		}
	}
	if len(v) == 0 || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// Value formats an argument value for its header: strings as they are
// (then encoded), integers in decimal, booleans as true or false.
func Value(v jsontext.Value) (string, bool) {
	switch {
	case len(v) > 0 && v[0] == '"':
		s, err := jsonrpc2.Unquote(v)
		return Encode(s), err == nil
	case string(v) == "true", string(v) == "false":
		return string(v), true
	default:
		f, ok := new(big.Float).SetString(string(v))
		if !ok || !f.IsInt() {
			return "", false
		}
		i, _ := f.Int(nil)
		return i.String(), true
	}
}

// Matches compares a decoded header value with the body value it mirrors;
// numbers compare numerically ("42.0 and 42 are considered equal").
func Matches(header string, body jsontext.Value) bool {
	switch {
	case len(body) > 0 && body[0] == '"':
		s, err := jsonrpc2.Unquote(body)
		return err == nil && s == header
	case string(body) == "true", string(body) == "false":
		return header == string(body)
	default:
		a, ok1 := new(big.Float).SetString(header)
		b, ok2 := new(big.Float).SetString(string(body))
		if !ok1 || !ok2 {
			_, err := strconv.ParseFloat(header, 64)
			return err == nil && header == string(body)
		}
		return a.Cmp(b) == 0
	}
}

// canonicalKey is http.CanonicalHeaderKey for a header name that is a
// token (as x-mcp-header names are checked to be): the first letter and
// every letter after a hyphen upper case, the others lower case. Written
// out so that the server, which checks headers through this package,
// does not link net/http.
func canonicalKey(s string) string {
	b := []byte(s)
	upper := true
	for i, c := range b {
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	return string(b)
}
