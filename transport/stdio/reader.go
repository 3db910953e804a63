package stdio

import (
	"bytes"
	"io"
	"slices"
	"sync"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/rawbuf"
	"github.com/ferrymcp/ferry/jsonrpc"
)

const (
	// chunkSize is the size of the buffers lines are read into. Lines
	// are handed out as slices of these buffers, which are never written
	// again: a message costs no copy of its own, and its strings may share
	// its memory.
	chunkSize = 256 << 10
	// maxStage bounds the staging buffer kept between long lines.
	maxStage = 1 << 20
	// maxLent bounds the lines whose memory is taken back: larger ones
	// are rare, and a pool must not pin megabytes between collections.
	maxLent = 1 << 20
)

// lineReader splits newline-delimited JSON-RPC messages and decodes them.
// It never holds more than about one message's limit in memory, whatever
// the peer sends.
type lineReader struct {
	r     io.Reader
	lim   jsonrpc.Limits
	max   int
	chunk int // chunkSize, smaller in tests
	// nonJSON, when set, receives (the start of) every line that cannot
	// be JSON at all, which is then skipped instead of being reported as
	// a decode error. Clients use it to survive banners printed on stdout
	// by wrapper scripts.
	nonJSON func(line []byte)
	// beforeWait, when set, is called whenever no whole line is buffered,
	// before reading more: the server stream flushes answers left
	// buffered there.
	beforeWait func()

	buf        []byte // the chunk being filled
	start      int    // where the current line starts in buf
	scan       int    // where the search for its end resumes
	end        int    // how much of buf holds data
	readErr    error  // from r, reported once the data before it is used
	discarding bool   // the current line is over the limit: drop it
	discarded  int    // how much of it was dropped so far
	droppedCR  bool   // the last byte dropped was '\r', not counted in its size
	dropBlank  bool   // all that was dropped of it so far is white space
	reuse      int    // while discarding, where buf may be written again
	dropHead   []byte // the start of the line being dropped, to find its id
	dropTail   []byte // its end so far, likewise
	stage      []byte // where the end of a long line is read; see readLong

	// lend, when set, lends the long lines (a sixteenth of a chunk or
	// more, 16 KiB): each is copied into memory lend takes back once its
	// message is done with (see [ClientStream.Recycle]), and lent is that
	// memory for the line next returned. The copy costs less than the
	// garbage a long line makes otherwise (the collector runs as often as
	// bytes are allocated), or than the chunk it would fill; shorter
	// lines stay where they were read, many to a chunk. A line left in the chunk pins it: pinned tells
	// whether one was returned from the current chunk, which may be read
	// into again from its start only while none was.
	lend   *lender
	lent   []byte
	pinned bool
}

// lender keeps the memory of lent lines given back, for the next ones.
// Its pool is the stream's own: the messages of one server are alike in
// size. Buffers given back are reused by whoever reads next, and the
// collector empties the pool of those that wait too long, so that an
// idle stream holds none. Whole chunks lent (see lendChunk) come back to
// a pool of their own, to be read into again.
type lender struct{ pool, chunks sync.Pool }

// get returns memory for a line of n bytes, whose contents are
// undefined: one given back if it is large enough (one too small is
// dropped, so that the pool holds the sizes this server sends), else new,
// as from a nil lender.
func (l *lender) get(n int) []byte {
	if l != nil && n <= maxLent {
		if h, ok := l.pool.Get().(*[]byte); ok && cap(*h) >= n {
			return (*h)[:n]
		}
	}
	return rawbuf.Make(n)
}

// put takes back b, to which nothing refers any more; a nil lender
// leaves it to the collector.
func (l *lender) put(b []byte) {
	if l == nil || cap(b) == 0 || cap(b) > maxLent {
		return
	}
	b = b[:0]
	if cap(b) == chunkSize {
		l.chunks.Put(&b)
		return
	}
	l.pool.Put(&b)
}

// chunk returns a chunk of n bytes to read into: one given back, else
// new.
func (l *lender) chunk(n int) []byte {
	if n == chunkSize {
		if h, ok := l.chunks.Get().(*[]byte); ok {
			return (*h)[:n]
		}
	}
	return rawbuf.Make(n)
}

func newLineReader(r io.Reader, lim jsonrpc.Limits) *lineReader {
	return &lineReader{r: r, lim: lim, max: jsonrpc2.MaxSize(lim.MaxSize), chunk: chunkSize}
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
			m, err := jsonrpc.Decode(line, lr.lim)
			if lr.lent != nil {
				if err == nil {
					m.Buffer = lr.lent // the stream's to take back (Recycle)
				}
				// A message that did not decode is left to the
				// collector with its memory: the error may refer to it.
				lr.lent = nil
			}
			return m, err
		}
	}
}

// next returns the next line, without its line end, or nil for a line
// that was skipped (empty, or not JSON).
func (lr *lineReader) next() ([]byte, error) {
	limit := lr.max + 2 // room for "\r\n"
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.end], '\n'); i >= 0 {
			nl := lr.scan + i
			line := lr.buf[lr.start:nl]
			lr.start, lr.scan = nl+1, nl+1
			if lr.discarding {
				n := lr.discarded + len(trimCR(line))
				if len(line) == 0 && lr.droppedCR {
					n--
				}
				lr.discarding, lr.discarded = false, 0
				if lr.dropBlank && firstNonSpace(line) == len(line) {
					return nil, nil // a blank line, however long, is skipped
				}
				return nil, lr.tooLarge(n, keepTail(lr.dropTail, line))
			}
			return lr.hand(line)
		}
		lr.scan = lr.end
		if lr.beforeWait != nil {
			lr.beforeWait()
		}
		partial := lr.end - lr.start
		if !lr.discarding && partial > limit {
			lr.dropLine(lr.buf[lr.start:lr.end], nil)
			continue
		}
		if lr.discarding {
			lr.discarded += partial
			if partial > 0 {
				lr.droppedCR = lr.buf[lr.end-1] == '\r'
				lr.dropTail = keepTail(lr.dropTail, lr.buf[lr.start:lr.end])
				lr.dropBlank = lr.dropBlank && firstNonSpace(lr.buf[lr.start:lr.end]) == partial
			}
			lr.start = lr.end
			partial = 0
		}
		if lr.readErr != nil {
			lr.start = lr.end
			switch {
			case lr.discarding && lr.dropBlank:
				lr.discarding = false
				return nil, lr.readErr
			case lr.discarding:
				lr.discarding = false
				if lr.droppedCR {
					lr.discarded--
				}
				return nil, lr.tooLarge(lr.discarded, lr.dropTail)
			case partial > 0:
				// A last line without a newline still counts.
				return lr.hand(lr.buf[lr.end-partial : lr.end])
			}
			return nil, lr.readErr
		}
		if lr.discarding && lr.end == len(lr.buf) && len(lr.buf)-lr.reuse >= 4<<10 {
			// What is being dropped may be overwritten.
			lr.start, lr.scan, lr.end = lr.reuse, lr.reuse, lr.reuse
		}
		if lr.end == len(lr.buf) {
			unpinned := !lr.pinned && len(lr.buf) > 0 && partial < len(lr.buf)
			// A lending reader reads a long line that fits in a chunk
			// into one (this one, or a new one when a line returned
			// pins this one), since the line is copied out anyway: read
			// with readLong, every long line after a short one would
			// come in two reads, through the staging buffer.
			fits := lr.lend != nil && partial < lr.chunk
			if !lr.discarding && partial >= lr.chunk/16 && !unpinned && !fits { // a long line
				if line, done, err := lr.readLong(limit); done {
					return line, err
				}
				continue
			}
			lr.reuse = 0
			if unpinned {
				// No line returned refers to this chunk (the long ones
				// were lent): what is left of it moves to its start.
				copy(lr.buf, lr.buf[lr.start:lr.end])
			} else {
				nb := rawbuf.Make(lr.chunk) // read into before it is looked at
				copy(nb, lr.buf[lr.start:lr.end])
				lr.buf, lr.pinned = nb, false
			}
			lr.start, lr.scan, lr.end = 0, partial, partial
		}
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err == jsonrpc.ErrReadInterrupted {
			// Not an end: the next call goes on from here.
			return nil, err
		}
		if err != nil {
			lr.readErr = err
		}
	}
}

// readLong reads the rest of a long line, one that has filled the chunk
// from lr.start on and is at least a sixteenth of a chunk. Copying its
// start into a new chunk, as shorter lines are, would leave that much of
// the old chunk unused, and a line of 64 KiB would cost a quarter of a
// 256 KiB chunk more than its size. The
// rest of the line is read into a staging buffer instead, kept for the
// next long line, and the whole line copied into a buffer of exactly its
// size. The chunk is read into again from where the line started.
//
// done is false when the line turned out to be over the limit: what is
// left of it is then dropped by next, as for any line over the limit.
func (lr *lineReader) readLong(limit int) (line []byte, done bool, err error) {
	s := lr.start
	head := lr.buf[s:lr.end]
	stage := lr.stage[:0]
	defer func() {
		if cap(stage) <= maxStage {
			lr.stage = stage[:0]
		} else {
			lr.stage = nil
		}
	}()
	for {
		if len(stage) > 0 && lr.beforeWait != nil {
			lr.beforeWait()
		}
		if len(stage) == cap(stage) {
			stage = slices.Grow(stage, len(head))
		}
		// No more than fits where the line started: what follows the
		// line goes there once it is copied out (see resume).
		k := len(stage)
		n, rerr := lr.r.Read(stage[k:min(cap(stage), k+len(lr.buf)-s)])
		if rerr == jsonrpc.ErrReadInterrupted {
			rerr = nil // the rest of the line is on its way: read on
		}
		stage = stage[:k+n]
		nl := bytes.IndexByte(stage[k:], '\n')
		if nl < 0 && len(head)+len(stage) > limit {
			lr.readErr = rerr
			lr.dropLine(head, stage)
			return nil, false, nil
		}
		if nl < 0 && rerr == nil {
			continue
		}
		rest := stage[len(stage):]
		if nl >= 0 {
			nl += k
			stage, rest = stage[:nl], stage[nl+1:]
		}
		line := lr.lend.get(len(head) + len(stage))
		copy(line[copy(line, head):], stage)
		lr.resume(s, rest)
		lr.readErr = rerr
		out, err := lr.accept(trimCR(line))
		if lr.lend != nil {
			if out != nil && err == nil {
				lr.lent = line
			} else {
				lr.lend.put(line) // nothing refers to it: accept copies what it keeps
			}
		}
		return out, true, err
	}
}

// dropLine starts dropping the line being read, which went over the
// limit: head, then tail, is what came of it so far, head starting at
// lr.start. The rest of the line is read through into the chunk from
// there and dropped, so that it costs no more memory than an acceptable
// one: a banner silently, anything else to be reported as too large.
func (lr *lineReader) dropLine(head, tail []byte) {
	s := lr.start
	lr.scan, lr.end, lr.reuse = s, s, s
	c, ok := firstNonSpaceOf(head, tail)
	if ok && lr.notJSON(c) {
		lr.nonJSON(head)
		lr.skipBanner()
		return
	}
	lr.discarding, lr.discarded = true, len(head)+len(tail)
	lr.dropBlank = !ok
	lr.droppedCR = lastByte(head, tail) == '\r'
	lr.dropHead = append(lr.dropHead[:0], head[:min(len(head), dropHeadBytes)]...)
	if len(lr.dropHead) < dropHeadBytes {
		lr.dropHead = append(lr.dropHead, tail[:min(len(tail), dropHeadBytes-len(lr.dropHead))]...)
	}
	lr.dropTail = keepTail(keepTail(lr.dropTail[:0], head), tail)
}

// tooLarge is the error of a line of n bytes over the limit, whose first
// bytes are in dropHead and last ones in tail: with the message's id when
// they show it, so that the call it answers fails at once.
func (lr *lineReader) tooLarge(n int, tail []byte) error {
	id, request, ok := lineID(lr.dropHead, tail)
	if !ok {
		return jsonrpc2.TooLarge(n, lr.max)
	}
	return jsonrpc2.TooLargeID(n, lr.max, id, request)
}

// resume puts what was read after a long line where the line started in
// the chunk.
func (lr *lineReader) resume(s int, rest []byte) {
	copy(lr.buf[s:], rest)
	lr.start, lr.scan, lr.end = s, s, s+len(rest)
}

// buffered reports whether a whole line is buffered. The search is not
// done again by next: scan moves up to the newline found, or to the end
// of the data when there is none.
func (lr *lineReader) buffered() bool {
	i := bytes.IndexByte(lr.buf[lr.scan:lr.end], '\n')
	if i < 0 {
		lr.scan = lr.end
		return false
	}
	lr.scan += i
	return true
}

// skipBanner drops the rest of a long line that is not JSON.
func (lr *lineReader) skipBanner() {
	base := lr.start // from here on, buf holds only what is dropped
	for {
		if i := bytes.IndexByte(lr.buf[lr.scan:lr.end], '\n'); i >= 0 {
			lr.start, lr.scan = lr.scan+i+1, lr.scan+i+1
			return
		}
		lr.start, lr.scan = lr.end, lr.end
		if lr.readErr != nil {
			return
		}
		if lr.end == len(lr.buf) {
			if len(lr.buf)-base < 4<<10 {
				lr.buf, base, lr.pinned = rawbuf.Make(lr.chunk), 0, false
			}
			lr.start, lr.scan, lr.end = base, base, base
		}
		n, err := lr.r.Read(lr.buf[lr.end:])
		lr.end += n
		if err != nil && err != jsonrpc.ErrReadInterrupted {
			lr.readErr = err
		}
	}
}

// hand returns a whole line found in the chunk, once accepted: lent
// when it is long and the reader lends (a copy in memory of its own),
// else where it is, and the chunk is then never written again.
func (lr *lineReader) hand(raw []byte) ([]byte, error) {
	line, err := lr.accept(trimCR(raw))
	if line == nil || err != nil {
		return line, err
	}
	if lr.lend != nil && len(line) >= lr.chunk/16 {
		if lr.lendChunk(line) {
			return line[:len(line):len(line)], nil
		}
		b := lr.lend.get(len(line))
		copy(b, line)
		lr.lent = b
		return b[:len(line):len(line)], nil
	}
	lr.pinned = true
	return line, nil
}

// lendChunk lends line where it is, with the chunk it is in, rather
// than a copy, when the chunk may be given away (no line returned before
// pins it), when what was read after the line, which then moves to a new
// chunk, is less than the line (of the two copies, the smaller is made),
// and when the line is a quarter of the chunk or more: the memory held
// by a caller it lends answers to is then at most four times its
// answer's, however many answers are held at once. A server answering
// one call at a time writes one line per read, so that its answers of
// 64 KiB cost no copy at all.
func (lr *lineReader) lendChunk(line []byte) bool {
	rest := lr.end - lr.start
	if lr.pinned || rest >= len(line) || len(line) < lr.chunk/4 {
		return false
	}
	nb := lr.lend.chunk(lr.chunk)
	copy(nb, lr.buf[lr.start:lr.end])
	// The whole chunk is lent, to be read into again once given back:
	// what it holds before the line was handed out already, copied (a
	// line left in it would pin it).
	lr.lent = lr.buf
	lr.buf = nb
	lr.start, lr.scan, lr.end = 0, 0, rest
	return true
}

// accept checks a whole line. The line stays where it was read: its
// buffer is never written again.
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
		lr.dropHead = append(lr.dropHead[:0], line[:min(len(line), dropHeadBytes)]...)
		return nil, lr.tooLarge(len(line), line[max(0, len(line)-dropTailBytes):])
	}
	return line[:len(line):len(line)], nil
}

func (lr *lineReader) notJSON(c byte) bool {
	return lr.nonJSON != nil && c != '{' && c != '['
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
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

// firstNonSpaceOf returns the first byte of a and then b that is not
// space, if there is one.
func firstNonSpaceOf(a, b []byte) (byte, bool) {
	if i := firstNonSpace(a); i < len(a) {
		return a[i], true
	}
	if i := firstNonSpace(b); i < len(b) {
		return b[i], true
	}
	return 0, false
}

// lastByte returns the last byte of a and then b, or 0.
func lastByte(a, b []byte) byte {
	switch {
	case len(b) > 0:
		return b[len(b)-1]
	case len(a) > 0:
		return a[len(a)-1]
	}
	return 0
}
