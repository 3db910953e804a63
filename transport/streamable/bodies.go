package streamable

import (
	"io"
	"sync"

	"github.com/ferrymcp/ferry/internal/rawbuf"
)

// maxPooledBody bounds the bodies kept for reuse, sent or received:
// larger ones are rare, and a pool must not pin megabytes between
// collections.
const maxPooledBody = 1 << 20

// bodyPool recycles message bodies: on the server, those of requests
// whose handlers only borrowed them (see [jsonrpc.Message.Borrowed]); on
// the client, those of answers given back (see [jsonrpc.Recycler]). A
// body that is not given back belongs to its message and is never put
// back, so that code keeping what it decoded gets a fresh buffer for
// every message, as it must.
type bodyPool struct{ pool sync.Pool }

// get returns a buffer of length n whose contents are undefined, and the
// pool's handle of it when it came from the pool (nil otherwise).
func (p *bodyPool) get(n int) ([]byte, *[]byte) {
	if n <= maxPooledBody {
		if h, ok := p.pool.Get().(*[]byte); ok {
			if cap(*h) >= n {
				return (*h)[:n], h
			}
			// Too small for this body: dropped, so that the pool holds
			// the sizes the bodies of this server need.
		}
	}
	return rawbuf.Make(n), nil
}

// put gives a body back once nothing refers to it.
func (p *bodyPool) put(b []byte, h *[]byte) {
	if cap(b) == 0 || cap(b) > maxPooledBody {
		return
	}
	if h == nil {
		h = new([]byte)
	}
	*h = b[:0]
	p.pool.Put(h)
}

// read reads a body of the announced length (negative: none announced)
// of at most max bytes: into one buffer, from the pool, when the length
// is known (where io.ReadAll would grow it step by step), else up to max
// bytes, one more to tell a longer body. It returns the pool's handle of
// the buffer when it came from the pool.
func (p *bodyPool) read(r io.Reader, length int64, max int) ([]byte, *[]byte, error) {
	if length < 0 || length > int64(max) {
		b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		return b, nil, err
	}
	b, h := p.get(int(length))
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:n], h, err
}
