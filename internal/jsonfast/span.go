package jsonfast

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
)

// StringEnd finds the end of the JSON string starting at b[i] (a quote)
// when it is a simple one: it returns the offset past the closing quote,
// whether the string holds escapes, whether it is all ASCII (for a string
// without escapes, its length is then its rune count), and ok. A simple string holds no
// control character and only valid UTF-8; anything else (or an
// unterminated string) gives ok false, and the caller takes its own
// byte-by-byte path, which also says what is wrong.
//
// Plain ASCII is skipped 16 bytes at a time (vector instructions, see
// plainPrefix), so that a plain string costs one pass over its bytes; past
// the first byte that needs a look, the quote and the backslash are found
// with bytes.IndexByte and the rest is checked eight bytes at a time.
func StringEnd(b []byte, i int) (end int, escaped, ascii, ok bool) {
	start := i + 1
	j := start + plainPrefix(b[start:])
	if j < len(b) && b[j] == '"' {
		return j + 1, false, true, true // the common case: plain ASCII
	}
	q := bytes.IndexByte(b[j:], '"')
	if q < 0 {
		return -1, false, false, false
	}
	seg := b[j : j+q]
	if bytes.IndexByte(seg, '\\') >= 0 {
		// The quote found may be escaped: walk the escapes.
		end, ok := escapedEnd(b, j)
		return end, true, false, ok
	}
	ok, ascii = clean(seg)
	if !ok {
		return -1, false, false, false
	}
	return j + q + 1, false, ascii, true
}

// TrustedStringEnd is StringEnd for input already validated strictly
// (by jsonrpc.Decode): it only finds the closing quote, without checking
// the text again.
func TrustedStringEnd(b []byte, i int) (end int, escaped, ok bool) {
	start := i + 1
	j := start + plainPrefix(b[start:])
	if j < len(b) && b[j] == '"' {
		return j + 1, false, true
	}
	q := bytes.IndexByte(b[j:], '"')
	if q < 0 {
		return -1, false, false
	}
	if bytes.IndexByte(b[j:j+q], '\\') >= 0 {
		end, ok := escapedEnd(b, j)
		return end, true, ok
	}
	return j + q + 1, false, true
}

// escapedEnd finds the end of a string with escapes, checking the text
// between them.
func escapedEnd(b []byte, i int) (int, bool) {
	for {
		j := bytes.IndexAny(b[i:], "\"\\")
		if j < 0 {
			return -1, false
		}
		if ok, _ := clean(b[i : i+j]); !ok {
			return -1, false
		}
		i += j
		if b[i] == '"' {
			return i + 1, true
		}
		if i+1 >= len(b) {
			return -1, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				return -1, false
			}
			for _, c := range b[i+2 : i+6] {
				if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
					return -1, false
				}
			}
			i += 6
		default:
			return -1, false
		}
	}
}

// clean reports whether s holds no control character and is valid
// UTF-8, and whether it is all ASCII.
func clean(s []byte) (ok, ascii bool) {
	i := 0
	for ; i+32 <= len(s); i += 32 {
		v0 := binary.LittleEndian.Uint64(s[i:])
		v1 := binary.LittleEndian.Uint64(s[i+8:])
		v2 := binary.LittleEndian.Uint64(s[i+16:])
		v3 := binary.LittleEndian.Uint64(s[i+24:])
		// A byte below 0x20 borrows into its high bit; a non-ASCII byte
		// has it set already.
		if ((v0-lsb*0x20)|v0|(v1-lsb*0x20)|v1|(v2-lsb*0x20)|v2|(v3-lsb*0x20)|v3)&msb != 0 {
			return cleanSlow(s[i:])
		}
	}
	for ; i+8 <= len(s); i += 8 {
		v := binary.LittleEndian.Uint64(s[i:])
		if ((v-lsb*0x20)|v)&msb != 0 {
			return cleanSlow(s[i:])
		}
	}
	return cleanSlow(s[i:])
}

func cleanSlow(s []byte) (ok, ascii bool) {
	ascii = true
	for _, c := range s {
		if c < 0x20 {
			return false, false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(s), ascii
}

// CleanString reports whether s needs no escaping in JSON: no quote, no
// backslash, no control character, valid UTF-8.
func CleanString(s []byte) bool {
	s = s[plainPrefix(s):]
	if len(s) == 0 {
		return true
	}
	if bytes.IndexByte(s, '"') >= 0 || bytes.IndexByte(s, '\\') >= 0 {
		return false
	}
	ok, _ := clean(s)
	return ok
}
