package jsonfast

import "encoding/binary"

// plainPrefix returns the length of the longest prefix of b that holds
// no byte needing attention in a JSON string: no quote, no backslash, no
// control character, no non-ASCII byte. It is the first pass over every
// string decoded or quoted: for the plain ASCII text that makes up most
// large payloads it is the only one.
func plainPrefix(b []byte) int {
	// Most strings are short (member names, ids, small values): a byte
	// loop finds their end before setting up vector compares would pay.
	n := min(len(b), shortPrefix)
	for i, c := range b[:n] {
		if needsLook[c] {
			return i
		}
	}
	if n == len(b) {
		return n
	}
	i := n + plainPrefixVector(b[n:]) // whole 16-byte blocks, where the CPU can
	return i + plainPrefixWords(b[i:])
}

// shortPrefix is how many bytes plainPrefix looks at one by one.
const shortPrefix = 16

// needsLook marks the bytes that end a plain prefix.
var needsLook = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\'
	}
	return t
}()

// plainPrefixWords is plainPrefix eight bytes at a time.
func plainPrefixWords(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if !plain(binary.LittleEndian.Uint64(b[i:])) {
			break
		}
	}
	for ; i < len(b); i++ {
		if needsLook[b[i]] {
			return i
		}
	}
	return i
}
