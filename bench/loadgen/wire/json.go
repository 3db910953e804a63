// Package wire is the load generator's MCP client, written against the
// wire and nothing else: newline-delimited JSON-RPC over a child's stdio,
// and Streamable HTTP over a minimal HTTP/1.1 client, in both protocol
// eras. Answers are checked by a small scanner that reads only the top
// level of a message and the fields an echo answer has; every 64th answer
// is also decoded with encoding/json and checked again, independently.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

var (
	// ErrMismatch is an answer whose echoed text differs from the message.
	ErrMismatch = errors.New("echo mismatch")
	// ErrFatal marks an error after which the connection cannot go on.
	ErrFatal  = errors.New("fatal")
	errSyntax = errors.New("malformed JSON")
)

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
// It looks for quotes with IndexByte (vectorised) and tells an escaped one
// by the backslashes before it, so a 64 KiB string costs microseconds.
func skipString(b []byte, i int) (int, error) {
	start := i + 1
	for i = start; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errSyntax
		}
		q := i + j
		n := 0
		for p := q - 1; p >= start && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		i = q + 1
	}
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				var err error
				if i, err = skipString(b, i); err != nil {
					return 0, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \n\r\t"), b[j]) < 0 {
		j++
	}
	if j == i {
		return 0, errSyntax
	}
	return j, nil
}

// eachField calls visit with every key and raw value of the object obj,
// in order, until visit returns false. Only the object's own keys are
// visited, never nested ones.
func eachField(obj []byte, visit func(k, v []byte) bool) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return errSyntax
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		if obj[i] != '"' {
			return errSyntax
		}
		end, err := skipString(obj, i)
		if err != nil {
			return err
		}
		k := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return errSyntax
		}
		i = skipSpace(obj, i+1)
		vend, err := skipValue(obj, i)
		if err != nil {
			return err
		}
		if !visit(k, obj[i:vend]) {
			return nil
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return errSyntax
		}
		i = skipSpace(obj, i+1)
	}
	return errSyntax
}

// field returns the raw value of key in the object obj (nil if absent).
func field(obj []byte, key string) ([]byte, error) {
	var v []byte
	err := eachField(obj, func(k, val []byte) bool {
		if string(k) == key {
			v = val
			return false
		}
		return true
	})
	return v, err
}

// firstElement returns the first element of the array arr (nil if empty).
func firstElement(arr []byte) ([]byte, error) {
	if len(arr) == 0 || arr[0] != '[' {
		return nil, errSyntax
	}
	i := skipSpace(arr, 1)
	if i < len(arr) && arr[i] == ']' {
		return nil, nil
	}
	end, err := skipValue(arr, i)
	if err != nil {
		return nil, err
	}
	return arr[i:end], nil
}

// MessageID returns the integer id of a JSON-RPC message, and false for
// a message without one (a notification) or with a non-integer id.
func MessageID(msg []byte) (int64, bool) {
	raw, err := field(msg, "id")
	if err != nil || raw == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(string(raw), 10, 64)
	return id, err == nil
}

// CheckAnswer checks that msg answers a tools/call of echo with want: no
// JSON-RPC error, not isError, and content[0].text equal to want. It reads
// the message's top level once and the result's once.
func CheckAnswer(msg, want []byte) error {
	var errv, result, isErr, content []byte
	if err := eachField(msg, func(k, v []byte) bool {
		switch string(k) {
		case "error":
			errv = v
		case "result":
			result = v
		}
		return true
	}); err != nil {
		return fmt.Errorf("answer: %w: %.200s", err, msg)
	}
	if errv != nil {
		return fmt.Errorf("JSON-RPC error: %.200s", errv)
	}
	if result == nil {
		return fmt.Errorf("no result: %.200s", msg)
	}
	if err := eachField(result, func(k, v []byte) bool {
		switch string(k) {
		case "isError":
			isErr = v
		case "content":
			content = v
		}
		return true
	}); err != nil {
		return fmt.Errorf("result: %w", err)
	}
	if string(isErr) == "true" {
		return fmt.Errorf("isError result: %.200s", result)
	}
	first, err := firstElement(content)
	if err != nil || first == nil {
		return fmt.Errorf("no content: %.200s", result)
	}
	text, err := field(first, "text")
	if err != nil || len(text) < 2 || text[0] != '"' {
		return fmt.Errorf("content[0] has no text: %.200s", first)
	}
	return compareText(text, want)
}

// compareText compares a raw JSON string with want, decoding it first
// only if the writer used escapes.
func compareText(raw, want []byte) error {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		inner = []byte(s)
	}
	if !bytes.Equal(inner, want) {
		return fmt.Errorf("%w: got %d bytes %.40q, want %d bytes %.40q", ErrMismatch, len(inner), inner, len(want), want)
	}
	return nil
}

// answer is an echo answer as encoding/json sees it.
type answer struct {
	ID     *int64          `json:"id"`
	Error  json.RawMessage `json:"error"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// FullCheck decodes msg entirely with encoding/json and checks it answers
// request id with want: the scanner's cross-check.
func FullCheck(msg []byte, id int64, want []byte) error {
	var a answer
	if err := json.Unmarshal(msg, &a); err != nil {
		return fmt.Errorf("full check: %w", err)
	}
	switch {
	case a.ID == nil || *a.ID != id:
		return fmt.Errorf("full check: id is not %d", id)
	case a.Error != nil:
		return fmt.Errorf("full check: JSON-RPC error %s", a.Error)
	case a.Result == nil || a.Result.IsError || len(a.Result.Content) == 0:
		return fmt.Errorf("full check: not an echo result")
	case a.Result.Content[0].Type != "text" || a.Result.Content[0].Text != string(want):
		return fmt.Errorf("%w (full check)", ErrMismatch)
	}
	return nil
}
