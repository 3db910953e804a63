package jsonrpc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/ferrymcp/ferry/internal/jsonfast"

	"github.com/go-json-experiment/json/jsontext"
)

// scanner validates JSON text strictly (RFC 8259, valid UTF-8, no duplicate
// object member names) in a single pass, without building any value. The
// decoder uses it to find the members of a message and to check the whole
// message before any handler sees it; handlers then decode their own params
// from the raw bytes.
type scanner struct {
	data     []byte
	maxDepth int
}

// member is called for each member of an object visited with a visitor.
// name is the raw member name without quotes (escapes left in place when
// escaped is true); value spans data[start:end].
type visitor func(name []byte, escaped bool, start, end int) error

func (s *scanner) syntaxErr(i int, what string) *Error {
	return errorf(CodeParseError, "invalid JSON at offset %d: %s", i, what)
}

func (s *scanner) skipSpace(i int) int {
	d := s.data
	for i < len(d) && d[i] <= ' ' && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// value validates the value starting at data[i] (no leading space) and
// returns the offset just past it.
func (s *scanner) value(i, depth int) (int, error) {
	if i >= len(s.data) {
		return i, s.syntaxErr(i, "unexpected end of input")
	}
	switch c := s.data[i]; c {
	case '{':
		return s.object(i, depth+1, nil)
	case '[':
		return s.array(i, depth+1)
	case '"':
		end, _, err := s.str(i)
		return end, err
	case 't':
		return s.literal(i, "true")
	case 'f':
		return s.literal(i, "false")
	case 'n':
		return s.literal(i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return s.number(i)
		}
		return i, s.syntaxErr(i, "unexpected character "+quoteByte(c))
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	const hex = "0123456789abcdef"
	return "0x" + string(hex[c>>4]) + string(hex[c&15])
}

func (s *scanner) literal(i int, lit string) (int, error) {
	if len(s.data)-i < len(lit) || string(s.data[i:i+len(lit)]) != lit {
		return i, s.syntaxErr(i, "invalid literal")
	}
	return i + len(lit), nil
}

func (s *scanner) number(i int) (int, error) {
	d := s.data
	start := i
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i++; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	default:
		return start, s.syntaxErr(i, "invalid number")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return start, s.syntaxErr(i, "invalid number fraction")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			return start, s.syntaxErr(i, "invalid number exponent")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	return i, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special returns, for eight bytes at once, a mask whose lowest set bit is
// the high bit of the first byte that needs a closer look inside a string:
// a quote, a backslash, a control character or a non-ASCII byte. (Borrows
// may set bits above the first such byte, never below it.) Zero means none
// of the eight does.
func special(v uint64) uint64 {
	q := v ^ (lsb * '"')
	b := v ^ (lsb * '\\')
	ctl := (v - lsb*0x20) &^ v
	return (ctl | ((q - lsb) &^ q) | ((b - lsb) &^ b) | v) & msb
}

// str validates the string starting at data[i] (a quote) and returns the
// offset past its closing quote and whether it contains escapes.
func (s *scanner) str(i int) (end int, escaped bool, err error) {
	if end, escaped, _, ok := jsonfast.StringEnd(s.data, i); ok {
		return end, escaped, nil // the common case, found with vector instructions
	}
	d := s.data
	i++
	for {
		for i+8 <= len(d) {
			if m := special(binary.LittleEndian.Uint64(d[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8 // straight to that byte
				break
			}
			i += 8
		}
		if i >= len(d) {
			return i, escaped, s.syntaxErr(i, "unterminated string")
		}
		c := d[i]
		switch {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(d) {
				return i, escaped, s.syntaxErr(i, "unterminated string")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) || !isHex4(d[i+2:i+6]) {
					return i, escaped, s.syntaxErr(i, "invalid \\u escape")
				}
				i += 6
			default:
				return i, escaped, s.syntaxErr(i, "invalid escape "+quoteByte(d[i+1]))
			}
		case c < 0x20:
			return i, escaped, s.syntaxErr(i, "control character in string")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, escaped, s.syntaxErr(i, "invalid UTF-8 in string")
			}
			i += size
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (s *scanner) array(i, depth int) (int, error) {
	if depth > s.maxDepth {
		return i, errorf(CodeParseError, "JSON nested deeper than %d levels", s.maxDepth)
	}
	i = s.skipSpace(i + 1)
	if i < len(s.data) && s.data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = s.value(i, depth); err != nil {
			return i, err
		}
		i = s.skipSpace(i)
		if i >= len(s.data) {
			return i, s.syntaxErr(i, "unterminated array")
		}
		switch s.data[i] {
		case ',':
			i = s.skipSpace(i + 1)
		case ']':
			return i + 1, nil
		default:
			return i, s.syntaxErr(i, "expected ',' or ']' in array")
		}
	}
}

// object validates the object starting at data[i] and rejects duplicate
// member names. visit, when not nil, sees every member.
func (s *scanner) object(i, depth int, visit visitor) (int, error) {
	return s.objectWith(i, depth, visit, "", nil)
}

// objectWith is object, where inner, when not nil, sees the members of the
// member called innerName if its value is an object, in the same pass that
// validates it.
func (s *scanner) objectWith(i, depth int, visit visitor, innerName string, inner visitor) (int, error) {
	if depth > s.maxDepth {
		return i, errorf(CodeParseError, "JSON nested deeper than %d levels", s.maxDepth)
	}
	var names nameSet
	i = s.skipSpace(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(s.data) || s.data[i] != '"' {
			return i, s.syntaxErr(i, "expected a member name")
		}
		nameEnd, escaped, err := s.str(i)
		if err != nil {
			return i, err
		}
		name := s.data[i+1 : nameEnd-1]
		if !names.add(s.data, i+1, nameEnd-1, escaped) {
			return i, errorf(CodeParseError, "duplicate member name %s at offset %d", s.data[i:nameEnd], i)
		}
		i = s.skipSpace(nameEnd)
		if i >= len(s.data) || s.data[i] != ':' {
			return i, s.syntaxErr(i, "expected ':' after member name")
		}
		i = s.skipSpace(i + 1)
		start := i
		if inner != nil && i < len(s.data) && s.data[i] == '{' && isName(name, escaped, innerName) {
			i, err = s.object(i, depth+1, inner)
		} else {
			i, err = s.value(i, depth)
		}
		if err != nil {
			return i, err
		}
		if visit != nil {
			if err := visit(name, escaped, start, i); err != nil {
				return start, err
			}
		}
		i = s.skipSpace(i)
		if i >= len(s.data) {
			return i, s.syntaxErr(i, "unterminated object")
		}
		switch s.data[i] {
		case ',':
			i = s.skipSpace(i + 1)
		case '}':
			return i + 1, nil
		default:
			return i, s.syntaxErr(i, "expected ',' or '}' in object")
		}
	}
}

// isName reports whether the raw member name is want.
func isName(raw []byte, escaped bool, want string) bool {
	if escaped {
		raw = unescapeName(raw)
	}
	return string(raw) == want
}

// nameSet detects duplicate member names in one object. Small objects
// (the common case) keep where their names lie in data and are checked by
// linear search; an object with more names, or with an escaped one, moves
// its names to a map. The set is kept small, as every object clears one.
type nameSet struct {
	n     int
	small [8]struct{ start, end int32 }
	large map[string]struct{}
}

// add records the name in data[start:end] (raw, escapes left in place
// when escaped is set) and reports whether it is new to the object.
func (ns *nameSet) add(data []byte, start, end int, escaped bool) bool {
	raw := data[start:end]
	if ns.large == nil && !escaped && ns.n < len(ns.small) && end <= math.MaxInt32 {
		for _, n := range ns.small[:ns.n] {
			if string(data[n.start:n.end]) == string(raw) {
				return false
			}
		}
		ns.small[ns.n].start, ns.small[ns.n].end = int32(start), int32(end)
		ns.n++
		return true
	}
	if escaped {
		// Compare names by value: "a" and "\u0061" are the same member.
		if u, err := jsontext.AppendUnquote(nil, append(append([]byte{'"'}, raw...), '"')); err == nil {
			raw = u
		} else {
			// A name with an escaped lone surrogate has no exact value;
			// compare it by its text, marked with a byte that no valid
			// name holds so that it cannot equal an unescaped name whose
			// value is that text ("\ud800" versus "\\ud800").
			raw = append([]byte{0xff}, raw...)
		}
	}
	if ns.large == nil {
		ns.large = make(map[string]struct{}, 2*len(ns.small))
		for _, n := range ns.small[:ns.n] {
			ns.large[string(data[n.start:n.end])] = struct{}{}
		}
	}
	if _, dup := ns.large[string(raw)]; dup {
		return false
	}
	ns.large[string(raw)] = struct{}{}
	return true
}

// unquote decodes a JSON string token.
func unquote(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' {
		inner := raw[1 : len(raw)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(inner), nil
		}
	}
	b, err := jsontext.AppendUnquote(nil, raw)
	return string(b), err
}

// valid reports whether data is one strict JSON value (see [Decode] for
// what strict means), nested at most maxDepth levels.
func valid(data []byte, maxDepth int) error {
	s := scanner{data: data, maxDepth: maxDepth}
	i, err := s.value(s.skipSpace(0), 0)
	if err != nil {
		return err
	}
	if i = s.skipSpace(i); i != len(data) {
		return s.syntaxErr(i, "data after the JSON value")
	}
	return nil
}
