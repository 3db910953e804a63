package jsonrpc

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

var errNotObject = errors.New("jsonrpc: not a JSON object")

// Member returns the raw value of the top-level member name of the JSON
// object obj, walking only the object's top level (nested values are
// skipped, not decoded). Transports use it to compare HTTP headers with
// the body (Mcp-Name against params.name) without decoding the params.
func Member(obj jsontext.Value, name string) (jsontext.Value, bool, error) {
	s := scanner{data: obj, maxDepth: DefaultMaxDepth}
	i := s.skipSpace(0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false, errNotObject
	}
	var found jsontext.Value
	_, err := s.object(i, 1, func(n []byte, escaped bool, start, end int) error {
		if found == nil && isName(n, escaped, name) {
			found = obj[start:end]
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return found, found != nil, nil
}

// Unquote decodes a JSON string token.
func Unquote(raw jsontext.Value) (string, error) { return unquote(raw) }
