package jsonfast

import (
	"encoding/binary"

	"github.com/go-json-experiment/json/jsontext"
)

// The walking functions assume valid JSON: ferry validates every message
// strictly when it arrives (jsonrpc.Decode), before any of this runs. On
// input they cannot make sense of they report failure, and callers fall
// back to json v2.

// skipString returns the offset past the string starting at b[i] (a
// quote), and whether it holds escapes; -1 when it is unterminated.
func skipString(b []byte, i int) (int, bool) {
	if end, escaped, ok := TrustedStringEnd(b, i); ok {
		return end, escaped
	}
	i++
	escaped := false
	for {
		for i+8 <= len(b) && plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return -1, escaped
		}
		switch b[i] {
		case '"':
			return i + 1, escaped
		case '\\':
			escaped = true
			i += 2
		default:
			i++
		}
	}
}

// SkipValue returns the offset past the value starting at b[i], or -1.
func SkipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := skipString(b, i)
		return end
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				end, _ := skipString(b, i)
				if end < 0 {
					return -1
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\n', '\t', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// Name returns a member name as a string key to compare with.
func Name(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	u, err := jsontext.AppendUnquote(nil, append(append([]byte{'"'}, raw...), '"'))
	if err != nil {
		return string(raw)
	}
	return string(u)
}
