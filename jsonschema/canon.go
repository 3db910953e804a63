package jsonschema

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/ferrymcp/ferry/internal/jsonfast"
)

// The canonical form of a JSON value is a byte string such that two values
// are equal in the sense of JSON Schema (numbers by mathematical value,
// objects regardless of member order) exactly when their canonical forms
// are equal. enum, const and uniqueItems compare canonical forms.
//
// Strings are quoted with only '"', '\\' and control characters escaped, so
// a string token without escapes is its own canonical form; numbers are
// 'n' + sign + digits + 'e' + exponent; literals are themselves; arrays
// and objects are canonical members between brackets, objects sorted by
// name.

// appendCanonical appends the canonical form of the valid JSON value at
// data[i] (no leading space) and returns the offset past the value.
func appendCanonical(dst, data []byte, i int) ([]byte, int) {
	switch c := data[i]; {
	case c == '"':
		end, escaped, _, _ := jsonfast.ScanString(data, i, jsonfast.CountRunes)
		if !escaped {
			return append(dst, data[i:end]...), end
		}
		return appendCanonicalString(dst, jsonfast.AppendUnescaped(nil, data[i:end])), end
	case c == '-' || (c >= '0' && c <= '9'):
		end, _ := jsonfast.ScanNumber(data, i)
		d, _ := parseDecimal(data[i:end], nil)
		return appendCanonicalNumber(dst, d), end
	case c == 't':
		return append(dst, "true"...), i + 4
	case c == 'f':
		return append(dst, "false"...), i + 5
	case c == 'n':
		return append(dst, "null"...), i + 4
	case c == '[':
		dst = append(dst, '[')
		i = jsonfast.SkipSpace(data, i+1)
		if data[i] == ']' {
			return append(dst, ']'), i + 1
		}
		for {
			dst, i = appendCanonical(dst, data, i)
			i = jsonfast.SkipSpace(data, i)
			if data[i] == ']' {
				return append(dst, ']'), i + 1
			}
			dst = append(dst, ',')
			i = jsonfast.SkipSpace(data, i+1)
		}
	default: // '{'
		type member struct{ name, value []byte }
		var members []member
		i = jsonfast.SkipSpace(data, i+1)
		for data[i] != '}' {
			var name []byte
			name, i = appendCanonical(nil, data, i)
			i = jsonfast.SkipSpace(data, i)
			i = jsonfast.SkipSpace(data, i+1) // ':'
			var value []byte
			value, i = appendCanonical(nil, data, i)
			members = append(members, member{name, value})
			i = jsonfast.SkipSpace(data, i)
			if data[i] == ',' {
				i = jsonfast.SkipSpace(data, i+1)
			}
		}
		slices.SortFunc(members, func(a, b member) int { return bytes.Compare(a.name, b.name) })
		dst = append(dst, '{')
		for k, m := range members {
			if k > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, m.name...)
			dst = append(dst, ':')
			dst = append(dst, m.value...)
		}
		return append(dst, '}'), i + 1
	}
}

func appendCanonicalString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

func appendCanonicalNumber(dst []byte, d decimal) []byte {
	dst = append(dst, 'n')
	if d.neg {
		dst = append(dst, '-')
	}
	dst = append(dst, d.digits...)
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, int64(d.exp), 10)
}

// canonical returns the canonical form of the valid JSON value v.
func canonical(v []byte) []byte {
	out, _ := appendCanonical(nil, v, jsonfast.SkipSpace(v, 0))
	return out
}
