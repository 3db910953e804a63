package jsonrpc2

import (
	"math"

	"github.com/ferrymcp/ferry/internal/jsonfast"

	"github.com/go-json-experiment/json/jsontext"
)

// scanner validates JSON text strictly (RFC 8259, valid UTF-8, no duplicate
// object member names) in a single pass, without building any value; its
// tokens are read by jsonfast's strict tokenizer, the validator's too. The
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

// tokenErr turns an error of the tokenizer into the decoder's.
func tokenErr(e *jsonfast.SyntaxError) *Error {
	return errorf(CodeParseError, "invalid JSON at offset %d: %s", e.Offset, e.What)
}

func (s *scanner) skipSpace(i int) int { return jsonfast.SkipSpace(s.data, i) }

// value validates the value starting at data[i] (no leading space) and
// returns the offset just past it.
func (s *scanner) value(i, depth int) (int, error) {
	if i >= len(s.data) {
		return i, tokenErr(jsonfast.Unexpected(s.data, i))
	}
	var end int
	var err *jsonfast.SyntaxError
	switch c := s.data[i]; c {
	case '{':
		return s.object(i, depth+1, nil)
	case '[':
		return s.array(i, depth+1)
	case '"':
		end, _, _, err = jsonfast.ScanString(s.data, i, jsonfast.LoneSurrogates)
	case 't':
		end, err = jsonfast.ScanLiteral(s.data, i, "true")
	case 'f':
		end, err = jsonfast.ScanLiteral(s.data, i, "false")
	case 'n':
		end, err = jsonfast.ScanLiteral(s.data, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			end, err = jsonfast.ScanNumber(s.data, i)
		} else {
			err = jsonfast.Unexpected(s.data, i)
		}
	}
	if err != nil {
		return i, tokenErr(err)
	}
	return end, nil
}

// str validates the string starting at data[i] (a quote) and returns the
// offset past its closing quote and whether it contains escapes. Lone
// surrogate escapes are accepted and left for the handler to judge.
func (s *scanner) str(i int) (end int, escaped bool, err error) {
	end, escaped, _, serr := jsonfast.ScanString(s.data, i, jsonfast.LoneSurrogates)
	if serr != nil {
		return end, escaped, tokenErr(serr)
	}
	return end, escaped, nil
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
	return s.objectWith(i, depth, visit, inner{}, inner{})
}

// inner is a member of an object whose members, when its value is an
// object, a visitor sees (see objectWith).
type inner struct {
	name  string
	visit visitor
}

// objectWith is object, where the visitor of a or of b, when not nil,
// sees the members of the member they name if its value is an object, in
// the same pass that validates them.
func (s *scanner) objectWith(i, depth int, visit visitor, a, b inner) (int, error) {
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
		var in visitor
		if i < len(s.data) && s.data[i] == '{' {
			switch {
			case a.visit != nil && isName(name, escaped, a.name):
				in = a.visit
			case b.visit != nil && isName(name, escaped, b.name):
				in = b.visit
			}
		}
		if in != nil {
			i, err = s.object(i, depth+1, in)
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
