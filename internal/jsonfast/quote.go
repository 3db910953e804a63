// Package jsonfast encodes and decodes JSON strings eight bytes at a time.
//
// The hot paths of MCP carry large strings (file contents, query results,
// base64 images) that json v2 quotes and unquotes one byte at a time. The
// functions here produce exactly the same bytes as json v2 with its
// default options (no HTML escaping; control characters as \b \f \n \r \t
// or \u00XX; invalid UTF-8 reported as an error), but skip runs of plain
// ASCII a word at a time.
package jsonfast

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"
	"unsafe"
)

// ErrInvalidUTF8 reports a string that is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("jsonfast: invalid UTF-8 in string")

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain reports whether none of eight bytes needs attention when quoting
// or unquoting: no quote, no backslash, no control character, no
// non-ASCII byte.
func plain(v uint64) bool {
	q := v ^ (lsb * '"')
	b := v ^ (lsb * '\\')
	ctl := (v - lsb*0x20) &^ v
	return (ctl|((q-lsb)&^q)|((b-lsb)&^b)|v)&msb == 0
}

// AppendQuote appends s as a quoted JSON string.
func AppendQuote(dst []byte, s string) ([]byte, error) {
	dst = append(dst, '"')
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	if CleanString(b) {
		dst = append(dst, s...)
		return append(dst, '"'), nil
	}
	return appendEscaping(dst, s)
}

// appendEscaping appends s, known to need escaping, and the closing
// quote, after dst's opening one.
func appendEscaping(dst []byte, s string) ([]byte, error) {
	b := unsafe.Slice(unsafe.StringData(s), len(s)) // read only
	i, start := 0, 0
	var err error
	for i < len(s) {
		for i+8 <= len(b) && plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		switch {
		case c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf:
			i++
		case c < utf8.RuneSelf:
			dst = append(dst, s[start:i]...)
			dst = appendEscaped(dst, c)
			i++
			start = i
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				err = ErrInvalidUTF8
				i += n
				start = i
				continue
			}
			i += n
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), err
}

func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}

// SimpleEnd returns the length of the JSON string token at the start of
// b (quotes included) when it has no escape sequence, or 0 when it has
// one or is not a string. The bytes between the quotes may then be used
// as the string's value, after checking they are valid UTF-8.
func SimpleEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' {
		return 0
	}
	i := 1
	for {
		for i+8 <= len(b) && plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return 0
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\' || c < 0x20:
			return 0
		default:
			i++ // non-ASCII: validated by the caller
		}
	}
}
