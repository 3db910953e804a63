package jsonrpc2

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

var errNotObject = errors.New("jsonrpc: not a JSON object")

// member returns the raw value of the top-level member name of the JSON
// object obj (Member).
func member(obj jsontext.Value, name string) (jsontext.Value, bool, error) {
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
