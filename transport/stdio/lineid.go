package stdio

import "bytes"

// Bounds of what is kept of a line over the limit, to find its id.
const (
	dropHeadBytes = 1 << 10
	dropTailBytes = 256
)

// lineID finds the id of a message too large to decode from its first
// and last bytes, so that the call it answers fails at once instead of
// waiting for its timeout: a top-level "id" member among the first bytes
// (ferry and most SDKs write it early), or the last member before the
// final "}" (the TypeScript SDK writes it last). request reports a
// top-level "method" member among the first bytes: the message is the
// peer's request, not an answer, whatever its id.
func lineID(head, tail []byte) (id []byte, request, ok bool) {
	id, request, ok = headID(head)
	if !ok && !request {
		id, ok = tailID(tail)
	}
	return id, request, ok
}

// headID scans the members of the object that head starts, as far as
// head goes.
func headID(b []byte) (id []byte, request, ok bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false, false
	}
	i++
	for {
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != '"' {
			return id, request, ok
		}
		end := stringEnd(b, i)
		if end < 0 {
			return id, request, ok
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return id, request, ok
		}
		i = skipSpace(b, i+1)
		vend := valueEnd(b, i)
		if vend < 0 {
			return id, request, ok
		}
		switch string(key) {
		case "id":
			id, ok = b[i:vend], true
		case "method":
			request = true
		}
		i = skipSpace(b, vend)
		if i >= len(b) || b[i] != ',' {
			return id, request, ok
		}
		i++
	}
}

// tailID finds a last member "id" before the final "}" of tail.
func tailID(b []byte) ([]byte, bool) {
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil, false
	}
	b = bytes.TrimRight(b[:len(b)-1], " \t\r\n")
	end := len(b)
	start := end
	switch {
	case end > 0 && b[end-1] == '"':
		for start = end - 2; start >= 0; start-- {
			if b[start] == '"' && !escaped(b, start) {
				break
			}
		}
		if start < 0 {
			return nil, false
		}
	default:
		for start > 0 && bytes.IndexByte([]byte("-+.0123456789eEnul"), b[start-1]) >= 0 {
			start--
		}
	}
	if start == end {
		return nil, false
	}
	value := b[start:end]
	rest := bytes.TrimRight(b[:start], " \t\r\n")
	rest, found := bytes.CutSuffix(rest, []byte(":"))
	if !found {
		return nil, false
	}
	rest, found = bytes.CutSuffix(bytes.TrimRight(rest, " \t\r\n"), []byte(`"id"`))
	if !found {
		return nil, false
	}
	rest = bytes.TrimRight(rest, " \t\r\n")
	if len(rest) == 0 || (rest[len(rest)-1] != ',' && rest[len(rest)-1] != '{') {
		return nil, false
	}
	return value, true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i], or
// -1 when b ends first.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// valueEnd returns the index after the value that starts at b[i], or -1
// when b ends first.
func valueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				if j = stringEnd(b, j); j < 0 {
					return -1
				}
				j--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	if j == len(b) {
		return -1
	}
	return j
}

// escaped reports whether the quote at b[i] is escaped.
func escaped(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// keepTail appends p to the bytes kept of the end of a dropped line.
func keepTail(tail, p []byte) []byte {
	if len(p) >= dropTailBytes {
		return append(tail[:0], p[len(p)-dropTailBytes:]...)
	}
	if over := len(tail) + len(p) - dropTailBytes; over > 0 {
		tail = append(tail[:0], tail[over:]...)
	}
	return append(tail, p...)
}
