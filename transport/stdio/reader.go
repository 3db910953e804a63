package stdio

import (
	"bufio"
	"errors"
	"io"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// readBufSize is the size of the line reader's buffer. Lines that fit are
// copied out of it once; longer ones are gathered fragment by fragment.
const readBufSize = 128 << 10

// lineReader splits newline-delimited JSON-RPC messages and decodes them.
// It never holds more than about one message's limit in memory, whatever
// the peer sends.
type lineReader struct {
	br  *bufio.Reader
	lim jsonrpc.Limits
	max int
	// nonJSON, when set, receives (the start of) every line that cannot
	// be JSON at all, which is then skipped instead of being reported as
	// a decode error. Clients use it to survive banners printed on stdout
	// by wrapper scripts.
	nonJSON func(line []byte)
}

func newLineReader(r io.Reader, lim jsonrpc.Limits) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, readBufSize), lim: lim, max: lim.MaxSizeOrDefault()}
}

// read returns the next message. A *[jsonrpc.DecodeError] reports one bad
// line; any other error comes from the underlying reader.
func (lr *lineReader) read() (*jsonrpc.Message, error) {
	for {
		line, err := lr.next()
		if err != nil {
			return nil, err
		}
		if line != nil {
			return jsonrpc.Decode(line, lr.lim)
		}
	}
}

// next returns the next line, without its line end, in a slice of its
// own, or nil for a line that was skipped (empty, or not JSON).
func (lr *lineReader) next() ([]byte, error) {
	frag, err := lr.br.ReadSlice('\n')
	switch {
	case err == nil:
		return lr.accept(trimEOL(frag))
	case errors.Is(err, bufio.ErrBufferFull):
		return lr.long(frag)
	case err == io.EOF && len(frag) > 0:
		// A last line without a newline still counts; the reader
		// reports io.EOF again on the next call.
		return lr.accept(trimEOL(frag))
	default:
		return nil, err
	}
}

// accept checks a whole line found in the read buffer and copies it out.
func (lr *lineReader) accept(line []byte) ([]byte, error) {
	i := firstNonSpace(line)
	if i == len(line) {
		return nil, nil
	}
	if lr.notJSON(line[i]) {
		lr.nonJSON(line)
		return nil, nil
	}
	if len(line) > lr.max {
		return nil, lr.lim.TooLargeError(len(line))
	}
	out := make([]byte, len(line))
	copy(out, line)
	return out, nil
}

func (lr *lineReader) notJSON(c byte) bool {
	return lr.nonJSON != nil && c != '{' && c != '['
}

// long gathers a line longer than the read buffer, whose first fragment
// is first. Once the line is known to exceed the limit, the rest of it is
// read through and dropped, so an oversized line costs no more memory
// than an acceptable one.
func (lr *lineReader) long(first []byte) ([]byte, error) {
	limit := lr.max + 2 // room for "\r\n"
	keep := true
	if i := firstNonSpace(first); i < len(first) && lr.notJSON(first[i]) {
		lr.nonJSON(first)
		keep = false
	}
	var buf []byte
	if keep && len(first) <= limit {
		buf = make([]byte, len(first), min(2*len(first), limit))
		copy(buf, first)
	}
	n := len(first)
	last := first[len(first)-1]
	for {
		frag, err := lr.br.ReadSlice('\n')
		if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		if buf != nil {
			if len(buf)+len(frag) > limit {
				buf = nil
			} else {
				buf = appendGrow(buf, frag, limit)
			}
		}
		if len(frag) > 0 {
			n += len(frag)
			last2 := last
			last = frag[len(frag)-1]
			if len(frag) >= 2 {
				last2 = frag[len(frag)-2]
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				// End of the line: work out its size without the line end.
				if last == '\n' {
					n--
					if last2 == '\r' {
						n--
					}
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !keep {
			return nil, nil
		}
		if buf == nil || n > lr.max {
			return nil, lr.lim.TooLargeError(n)
		}
		return trimEOL(buf), nil
	}
}

// appendGrow appends frag to buf, doubling the capacity (up to limit)
// when it must grow, so that a long line is copied a bounded number of
// times.
func appendGrow(buf, frag []byte, limit int) []byte {
	if need := len(buf) + len(frag); need > cap(buf) {
		nb := make([]byte, len(buf), min(max(2*cap(buf), need), limit))
		copy(nb, buf)
		buf = nb
	}
	return append(buf, frag...)
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func firstNonSpace(b []byte) int {
	for i, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return i
		}
	}
	return len(b)
}
