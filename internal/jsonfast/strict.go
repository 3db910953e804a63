package jsonfast

import (
	"strconv"
	"unicode/utf8"
)

// This file is ferry's one strict JSON tokenizer: RFC 8259 tokens, valid
// UTF-8 in strings (no overlong forms, no surrogates encoded in UTF-8),
// valid escapes. jsonrpc's decoder and jsonschema's validator both read
// their input with it, each walking objects and arrays its own way (the
// decoder picks out members, the validator checks each value against its
// schema), so that what one accepts as a string or a number the other
// accepts too. It works on offsets into the input and never copies.
//
// The walking functions of walk.go and cursor.go are not strict: they run
// on input this tokenizer has already accepted.

// SyntaxError reports malformed JSON: what is wrong, and the offset in the
// input where it was found. Callers turn it into their own error class.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string {
	return e.What + " (at offset " + strconv.Itoa(e.Offset) + ")"
}

// SkipSpace returns the offset of the first byte at or after b[i] that is
// not JSON whitespace.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && b[i] <= ' ' && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringRules says what [ScanString] accepts and reports beyond RFC 8259.
type StringRules uint8

const (
	// LoneSurrogates accepts a \u escape of a surrogate that is not half
	// of a pair ("\ud800"). RFC 8259 allows it; json v2 and JSON Schema
	// validators refuse it, as the validator does. The decoder accepts it
	// and leaves the text as it is: the handler that decodes the value
	// decides.
	LoneSurrogates StringRules = 1 << iota
	// CountRunes reports the string's length in Unicode code points, an
	// escape counting as the code point it stands for (a surrogate pair as
	// one), as JSON Schema's minLength and maxLength count.
	CountRunes
)

// ScanString checks the string token starting at b[i] (a quote) and
// returns the offset past its closing quote, whether it holds escapes,
// and, with [CountRunes], its length in code points (0 otherwise).
func ScanString(b []byte, i int, rules StringRules) (end int, escaped bool, runes int, err *SyntaxError) {
	// The common case, found with vector instructions. Escapes were
	// checked there except for surrogates; counted runes need the slow
	// path too.
	end, escaped, ascii, ok := StringEnd(b, i)
	if ok && (!escaped || rules == LoneSurrogates) {
		if rules&CountRunes != 0 {
			if ascii {
				runes = end - i - 2
			} else {
				runes = utf8.RuneCount(b[i+1 : end-1])
			}
		}
		return end, escaped, runes, nil
	}
	return scanStringSlow(b, i, rules)
}

// scanStringSlow is ScanString byte by byte, except for runs of plain
// ASCII, eight bytes at a time: the path of strings with escapes, and of
// strings that are wrong, whose fault it finds and names.
func scanStringSlow(b []byte, start int, rules StringRules) (end int, escaped bool, runes int, err *SyntaxError) {
	i := start + 1
	for {
		n := plainPrefixWords(b[i:])
		i += n
		runes += n
		if i >= len(b) {
			return i, escaped, runes, &SyntaxError{start, "unterminated string"}
		}
		c := b[i]
		switch {
		case c == '"':
			if rules&CountRunes == 0 {
				runes = 0
			}
			return i + 1, escaped, runes, nil
		case c == '\\':
			escaped = true
			n, err := scanEscape(b, i, rules&LoneSurrogates != 0)
			if err != nil {
				return i, escaped, runes, err
			}
			i += n
			runes++
		case c < 0x20:
			return i, escaped, runes, &SyntaxError{i, "control character in string"}
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, runes, &SyntaxError{i, "invalid UTF-8 in string"}
			}
			i += size
			runes++
		}
	}
}

// scanEscape checks the escape sequence at b[i] (a backslash) and returns
// its length; a surrogate pair counts as one sequence.
func scanEscape(b []byte, i int, lone bool) (int, *SyntaxError) {
	if i+1 >= len(b) {
		return 0, &SyntaxError{i, "unterminated string"}
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		r, ok := hex4(b, i+2)
		if !ok {
			return 0, &SyntaxError{i, "invalid \\u escape"}
		}
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if r2, ok := hex4(b, i+8); ok && r2 >= 0xdc00 && r2 < 0xe000 {
					return 12, nil
				}
			}
		case r < 0xdc00 || r >= 0xe000:
			return 6, nil
		}
		if lone {
			return 6, nil
		}
		return 0, &SyntaxError{i, "unpaired surrogate in \\u escape"}
	}
	return 0, &SyntaxError{i, "invalid escape " + QuoteByte(b[i+1])}
}

// hex4 decodes the four hexadecimal digits at b[i].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
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

// AppendUnescaped appends the text of the string token tok (quotes
// included), which [ScanString] accepted, to dst with its escapes decoded.
// A lone surrogate becomes U+FFFD, as in json v2's decoding.
func AppendUnescaped(dst, tok []byte) []byte {
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
			if r >= 0xd800 && r < 0xdc00 && i+7 < len(tok) && tok[i+6] == '\\' && tok[i+7] == 'u' {
				if r2, ok := hex4(tok, i+8); ok && r2 >= 0xdc00 && r2 < 0xe000 {
					r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r) // a lone surrogate is not valid: U+FFFD
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, tok[i+1])
		}
		i += 2
	}
	return dst
}

// ScanNumber checks the number token starting at b[i] and returns the
// offset past it.
func ScanNumber(b []byte, i int) (int, *SyntaxError) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	default:
		return start, &SyntaxError{i, "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return start, &SyntaxError{i, "invalid number fraction"}
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			return start, &SyntaxError{i, "invalid number exponent"}
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		}
	}
	return i, nil
}

// ScanLiteral checks that the literal lit (true, false or null) starts at
// b[i] and returns the offset past it.
func ScanLiteral(b []byte, i int, lit string) (int, *SyntaxError) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, &SyntaxError{i, "invalid literal"}
	}
	return i + len(lit), nil
}

// Unexpected is the error for a byte that starts no JSON value.
func Unexpected(b []byte, i int) *SyntaxError {
	if i >= len(b) {
		return &SyntaxError{i, "unexpected end of input"}
	}
	return &SyntaxError{i, "unexpected character " + QuoteByte(b[i])}
}

// QuoteByte shows a byte of malformed input in an error message: the
// character when it is printable ASCII, its hexadecimal value otherwise.
func QuoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	const hex = "0123456789abcdef"
	return "0x" + string(hex[c>>4]) + string(hex[c&15])
}
