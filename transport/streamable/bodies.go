package streamable

import (
	"sync"

	"github.com/ferrymcp/ferry/internal/rawbuf"
)

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
