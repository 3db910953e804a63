package jsonschema

import (
	"encoding/binary"
	"github.com/ferrymcp/ferry/internal/jsonfast"
	"strconv"
	"unicode/utf8"
)

// This file is the strict JSON tokenizer of the fast validator: RFC 8259,
// valid UTF-8 and valid escapes only (lone surrogates are rejected, as json
// v2 does). It works on offsets into the instance and never copies.

// syntaxError is a malformed instance; validation stops at the first one.
type syntaxError struct {
	offset int
	what   string
}

func (e *syntaxError) Error() string {
	return e.what + " (at offset " + strconv.Itoa(e.offset) + ")"
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainASCII8 reports whether the 8 bytes in x are all printable ASCII
// other than '"' and '\\', the bytes a string can hold without a closer
// look.
func plainASCII8(x uint64) bool {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	zq := (q - lsb) &^ q
	zb := (b - lsb) &^ b
	lt := (x - lsb*0x20) &^ x // high bit set where byte < 0x20 (or >= 0x80)
	return (x|zq|zb|lt)&msb == 0
}

// scanString checks the string starting at data[i] (a '"') and returns the
// offset past its closing quote, whether it has escapes, and its length in
// Unicode code points.
func scanString(data []byte, i int) (end int, escaped bool, runes int, err *syntaxError) {
	if end, escaped, ascii, ok := jsonfast.StringEnd(data, i); ok && !escaped {
		// The common case, found with vector instructions.
		if ascii {
			return end, false, end - i - 2, nil
		}
		return end, false, utf8.RuneCount(data[i+1 : end-1]), nil
	}
	start := i
	i++
	for {
		for i+8 <= len(data) && plainASCII8(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
			runes += 8
		}
		// Byte by byte until something special, then back to 8 at a time.
		for i < len(data) && plainByte[data[i]] {
			i++
			runes++
		}
		if i >= len(data) {
			return i, escaped, runes, &syntaxError{start, "unterminated string"}
		}
		c := data[i]
		switch {
		case c == '"':
			return i + 1, escaped, runes, nil
		case c == '\\':
			escaped = true
			n, err := scanEscape(data, i)
			if err != nil {
				return i, escaped, runes, err
			}
			i += n
			runes++
		case c < 0x20:
			return i, escaped, runes, &syntaxError{i, "control character in string"}
		default:
			size := utf8Size(data[i:])
			if size == 0 {
				return i, escaped, runes, &syntaxError{i, "invalid UTF-8 in string"}
			}
			i += size
			runes++
		}
	}
}

// plainByte tells the ASCII bytes that a string holds as they are.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// utf8Size returns the length of the valid multi-byte UTF-8 sequence at
// the start of b, or 0 (RFC 3629: no overlong forms, no surrogates).
func utf8Size(b []byte) int {
	c := b[0]
	cont := func(i int, lo, hi byte) bool { return i < len(b) && b[i] >= lo && b[i] <= hi }
	switch {
	case c >= 0xc2 && c <= 0xdf:
		if cont(1, 0x80, 0xbf) {
			return 2
		}
	case c >= 0xe0 && c <= 0xef:
		lo, hi := byte(0x80), byte(0xbf)
		switch c {
		case 0xe0:
			lo = 0xa0
		case 0xed:
			hi = 0x9f
		}
		if cont(1, lo, hi) && cont(2, 0x80, 0xbf) {
			return 3
		}
	case c >= 0xf0 && c <= 0xf4:
		lo, hi := byte(0x80), byte(0xbf)
		switch c {
		case 0xf0:
			lo = 0x90
		case 0xf4:
			hi = 0x8f
		}
		if cont(1, lo, hi) && cont(2, 0x80, 0xbf) && cont(3, 0x80, 0xbf) {
			return 4
		}
	}
	return 0
}

// scanEscape checks the escape sequence at data[i] (a '\\') and returns its
// length; a surrogate pair counts as one sequence.
func scanEscape(data []byte, i int) (int, *syntaxError) {
	if i+1 >= len(data) {
		return 0, &syntaxError{i, "unterminated string"}
	}
	switch data[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		r, ok := hex4(data, i+2)
		if !ok {
			return 0, &syntaxError{i, "invalid \\u escape"}
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if i+7 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				r2, ok := hex4(data, i+8)
				if ok && r2 >= 0xdc00 && r2 < 0xe000 {
					return 12, nil
				}
			}
			return 0, &syntaxError{i, "unpaired surrogate in \\u escape"}
		case r >= 0xdc00 && r < 0xe000:
			return 0, &syntaxError{i, "unpaired surrogate in \\u escape"}
		}
		return 6, nil
	}
	return 0, &syntaxError{i, "invalid escape sequence"}
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// appendUnescaped appends the contents of the valid string token tok
// (quotes included) to dst, with escapes decoded.
func appendUnescaped(dst, tok []byte) []byte {
	tok = tok[1 : len(tok)-1]
	for i := 0; i < len(tok); {
		c := tok[i]
		if c != '\\' {
			j := i + 1
			for j < len(tok) && tok[j] != '\\' {
				j++
			}
			dst = append(dst, tok[i:j]...)
			i = j
			continue
		}
		switch tok[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(tok, i+2)
			if r >= 0xd800 && r < 0xdc00 {
				r2, _ := hex4(tok, i+8)
				r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, tok[i+1])
		}
		i += 2
	}
	return dst
}

// scanNumber checks the number starting at data[i] and returns the offset
// past it.
func scanNumber(data []byte, i int) (int, *syntaxError) {
	start := i
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return i, &syntaxError{start, "invalid number"}
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i++
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return i, &syntaxError{start, "invalid number"}
	}
	if i < len(data) && data[i] == '.' {
		i++
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		d := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		if i == d {
			return i, &syntaxError{start, "invalid number"}
		}
	}
	return i, nil
}

// maxNumberExp bounds the exponent of numbers in instances: a number such
// as 1e999999999 is valid JSON but its exact value is too costly to compute
// (santhosh-tekuri/jsonschema fails on it), and no Go number holds it.
const maxNumberExp = 1000

// exponentInRange reports whether the exponent of the valid number token
// tok, if it has one, is within ±maxNumberExp.
func exponentInRange(tok []byte) bool {
	for i := len(tok) - 1; i > 0; i-- {
		c := tok[i]
		if c >= '0' && c <= '9' || c == '+' || c == '-' {
			continue
		}
		if c != 'e' && c != 'E' {
			return true
		}
		e := 0
		for _, d := range tok[i+1:] {
			if d >= '0' && d <= '9' {
				e = e*10 + int(d-'0')
				if e > maxNumberExp {
					return false
				}
			}
		}
		return true
	}
	return true
}

// scanLiteral checks that lit starts at data[i].
func scanLiteral(data []byte, i int, lit string) (int, *syntaxError) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, &syntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}
