package stdio

import (
	"bytes"
	"strings"
	"sync"
)

// ring keeps the last bytes written to it, so that a chatty server's
// stderr costs a fixed amount of memory and the end of it, where the
// reason for a crash usually is, can be shown.
type ring struct {
	mu   sync.Mutex
	buf  []byte
	next int  // where the next byte goes
	full bool // buf has wrapped at least once
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

func (r *ring) Write(p []byte) (int, error) {
	n := len(p)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) >= len(r.buf) {
		copy(r.buf, p[len(p)-len(r.buf):])
		r.next, r.full = 0, true
		return n, nil
	}
	c := copy(r.buf[r.next:], p)
	if c < len(p) {
		copy(r.buf, p[c:])
		r.full = true
	}
	r.next = (r.next + len(p)) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
	return n, nil
}

// bytes returns a copy of what the ring holds, oldest first.
func (r *ring) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return bytes.Clone(r.buf[:r.next])
	}
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	return append(out, r.buf[:r.next]...)
}

// tail returns at most the last maxLines lines and maxBytes bytes, as
// valid UTF-8 and without the trailing line end. A line cut by the byte
// bound is dropped rather than shown from its middle, unless it is the
// only one.
func (r *ring) tail(maxLines, maxBytes int) string {
	b := r.bytes()
	b = bytes.TrimRight(b, " \t\r\n")
	if len(b) > maxBytes {
		b = b[len(b)-maxBytes:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	for n, i := 0, len(b); ; {
		j := bytes.LastIndexByte(b[:i], '\n')
		if j < 0 {
			break
		}
		if n++; n == maxLines {
			b = b[j+1:]
			break
		}
		i = j
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
