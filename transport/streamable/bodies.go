package streamable

import (
	"sync"

	"github.com/ferrymcp/ferry/internal/rawbuf"
)

// bodyPool recycles the request bodies of the requests whose handlers
// only borrowed them (see [jsonrpc.Message.Borrowed]). A body whose
// message was not borrowed belongs to the message and is never put back,
// so a server whose handlers keep their arguments gets a fresh buffer for
// every request, as it must.
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
