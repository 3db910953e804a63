// Package rawbuf allocates byte buffers that are about to be overwritten,
// without the zeroing that make does.
//
// The transports read every message into a buffer of its own (decoded
// strings share its memory, so it cannot be reused), and make clears
// each one first: for a 64 KiB message the clearing costs as much as the
// read itself. strings.Builder is the standard library's way to get
// memory that is not cleared; its buffer, taken over here, belongs to
// the caller alone once the builder is dropped.
package rawbuf

import (
	"strings"
	"unsafe"
)

// Make returns a slice of length n whose contents are undefined: the
// caller must write every byte it reads.
func Make(n int) []byte {
	if n <= 0 {
		return nil
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte(0) // so that String has memory to point at
	p := unsafe.StringData(b.String())
	return unsafe.Slice(p, n)
}
