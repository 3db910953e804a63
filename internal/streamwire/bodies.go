package streamwire

import (
	"io"
	"sync"

	"github.com/ferrymcp/ferry/internal/rawbuf"
)

// MaxPooledBody bounds the bodies kept for reuse, sent or received:
// larger ones are rare, and a pool must not pin megabytes between
// collections.
const MaxPooledBody = 1 << 20

// BodyPool recycles message bodies: on the server, those of requests
// lent to handlers that kept nothing of them (see [jsonrpc.Message.Lent]); on
// the client, those of answers given back (see [jsonrpc.Recycler]). A
// body that is not given back belongs to its message and is never put
// back, so that code keeping what it decoded gets a fresh buffer for
// every message, as it must.
type BodyPool struct {
	pool    sync.Pool
	scratch sync.Pool // of firstRead bytes, for the start of larger bodies
}

// get returns a buffer of length n whose contents are undefined, and the
// pool's handle of it when it came from the pool (nil otherwise).
func (p *BodyPool) get(n int) ([]byte, *[]byte) {
	if n <= MaxPooledBody {
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

// pooled returns a buffer of length n from the pool, or nil when the
// pool has none large enough (one too small is dropped, as by get).
func (p *BodyPool) pooled(n int) ([]byte, *[]byte) {
	if h, ok := p.pool.Get().(*[]byte); ok && cap(*h) >= n {
		return (*h)[:n], h
	}
	return nil, nil
}

// Put gives a body back once nothing refers to it.
func (p *BodyPool) Put(b []byte, h *[]byte) {
	if cap(b) == 0 || cap(b) > MaxPooledBody {
		return
	}
	if h == nil {
		h = new([]byte)
	}
	*h = b[:0]
	p.pool.Put(h)
}

// firstRead bounds the memory given to a body before its bytes arrive:
// a peer that announces a large Content-Length and sends little must not
// make the server hold what it announced (100 connections announcing
// 16 MiB each would hold 1.6 GB). Up to it, a body of known length is
// read in one piece; beyond, its buffer grows as bytes come, doubling, to
// the announced length.
const firstRead = 64 << 10

// Read reads a body of the announced length (negative: none announced)
// of at most max bytes: into one buffer, from the pool, when the length
// is known (where io.ReadAll would grow it step by step), else up to max
// bytes, one more to tell a longer body. It returns the pool's handle of
// the buffer when it came from the pool. The memory it takes grows with
// the bytes that arrive, not with the length announced: see firstRead.
func (p *BodyPool) Read(r io.Reader, length int64, max int) ([]byte, *[]byte, error) {
	if length < 0 || length > int64(max) {
		b, err := io.ReadAll(io.LimitReader(r, int64(max)+1))
		return b, nil, err
	}
	n := int(length)
	var b []byte
	var h *[]byte
	switch {
	case n <= firstRead:
		b, h = p.get(n)
	case n <= MaxPooledBody:
		b, h = p.pooled(n) // memory already there, if the pool has it
	}
	if b == nil {
		return p.grow(r, n)
	}
	k, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return b[:k], h, err
}

// grow reads a body of length n, above firstRead, into memory taken as
// its bytes arrive: the first firstRead bytes into a scratch buffer of
// the pool's, then into buffers that double, to n.
func (p *BodyPool) grow(r io.Reader, n int) ([]byte, *[]byte, error) {
	sp, _ := p.scratch.Get().(*[]byte)
	if sp == nil {
		sp = new([]byte)
		*sp = rawbuf.Make(firstRead)
	}
	defer p.scratch.Put(sp)
	k, err := io.ReadFull(r, *sp)
	if k < firstRead {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			err = nil
		}
		return append(rawbuf.Make(k)[:0], (*sp)[:k]...), nil, err
	}
	b := rawbuf.Make(min(n, 2*firstRead))
	got := copy(b, *sp)
	for got < n {
		if got == len(b) {
			bigger := rawbuf.Make(min(n, 2*len(b)))
			copy(bigger, b)
			b = bigger
		}
		k, err := r.Read(b[got:min(n, len(b))])
		got += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return b[:got], nil, err
		}
	}
	return b[:got], nil, nil
}
