package ssewire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// DefaultMaxEventBytes is the default bound on one event read by a
// [Reader]: room for a message of [jsonrpc.DefaultMaxSize] and its fields.
const DefaultMaxEventBytes = jsonrpc.DefaultMaxSize + 64<<10

// ErrEventTooLarge is returned (wrapped) by [Reader.Next] for an event
// over the reader's bound.
var ErrEventTooLarge = errors.New("sse: event too large")

// Reader parses an event stream (text/event-stream) following the WHATWG
// HTML rules, "9.2.6 Interpreting an event stream":
//
//   - lines end at CRLF, LF or CR; one leading byte order mark is ignored;
//   - a line starting with a colon is a comment and is ignored;
//   - "field: value" lines (one space after the colon is dropped; a line
//     without a colon is a field with an empty value) set the event's
//     data (each data line appends its value and a LF), event type, id
//     (ignored when it contains NUL) and retry (ignored unless only ASCII
//     digits); other fields are ignored;
//   - a blank line dispatches the event, its data without the final LF;
//   - an incomplete event at the end of the stream is discarded.
//
// "If the data buffer is an empty string, set the data buffer and the
// event type buffer to the empty string and return": a block with no
// data line is not dispatched, and [Reader.Next] does not return it. Its
// id and retry fields still take effect, as they do in a browser: the
// id of such a block (a priming event that carries only an id) becomes
// [Reader.LastEventID], and the ID of the events that follow; its retry
// becomes [Reader.Retry]. A caller tracking where to resume asks
// LastEventID when the stream ends. (A priming event with an empty data
// line, "id: 7\ndata:\n\n", is dispatched, with empty Data.)
//
// Unlike a browser, a Reader does not replace invalid UTF-8: Data holds
// the bytes that arrived.
//
// The reader is bounded: an event whose buffered fields (data, event
// type, id) would exceed the limit makes Next return an error wrapping
// [ErrEventTooLarge] as soon as that is known, without reading the rest
// of it into memory. The next call skips the rest of that event and goes
// on with the following one.
type Reader struct {
	r    io.Reader
	max  int
	buf  []byte
	pos  int   // start of the unread bytes in buf
	end  int   // end of the bytes read into buf
	rerr error // the error that stopped reading r, once buf is drained

	started bool // the leading byte order mark was looked for
	skipLF  bool // the last line ended with CR: a LF right after is part of it
	long    []byte

	// State of the event being parsed.
	data     []byte
	name     string
	retry    time.Duration
	hasRetry bool
	skipping bool // the event was too large: drop its lines up to the blank line
	midLine  bool // ... and the line it overflowed on has not ended yet

	idBuf       string // the "last event ID buffer"
	lastID      string // the "last event ID string"
	streamRetry time.Duration
	hasStream   bool
}

// NewReader returns a reader of the event stream r. Events over
// maxEventBytes are refused; zero or less means [DefaultMaxEventBytes].
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	return &Reader{r: r, max: maxEventBytes, buf: make([]byte, 16<<10)}
}

// LastEventID returns the last event ID of the stream so far: the id
// field of the latest block that ended with a blank line, dispatched or
// not. It is what a client sends as Last-Event-ID to resume.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry returns the reconnection time the stream last set with a retry
// field, and whether it set one.
func (r *Reader) Retry() (time.Duration, bool) { return r.streamRetry, r.hasStream }

// Next returns the next dispatched event. At the end of the stream it
// returns io.EOF (an event cut short is dropped); a read error of the
// underlying reader is returned as it is.
func (r *Reader) Next() (Event, error) {
	for {
		if r.skipping {
			blank, err := r.skipLine()
			if err != nil {
				return Event{}, err
			}
			if blank {
				r.skipping = false
				r.lastID = r.idBuf
				r.resetEvent()
			}
			continue
		}
		line, err := r.readLine(r.max - len(r.data) - len(r.name) - len(r.idBuf))
		if err != nil {
			if errors.Is(err, ErrEventTooLarge) {
				r.skipping = true
				r.data = nil
				return Event{}, fmt.Errorf("%w: over the limit of %d bytes", ErrEventTooLarge, r.max)
			}
			r.resetEvent()
			return Event{}, err
		}
		if len(line) > 0 {
			r.field(line)
			continue
		}
		// "If the line is empty (a blank line): Dispatch the event."
		r.lastID = r.idBuf
		if len(r.data) == 0 {
			r.resetEvent()
			continue
		}
		e := Event{ID: r.lastID, Name: r.name, Data: r.data[:len(r.data)-1], Retry: r.retry, HasRetry: r.hasRetry}
		if e.Name == "" {
			e.Name = "message"
		}
		r.data = nil // the event owns it now
		r.resetEvent()
		return e, nil
	}
}

func (r *Reader) resetEvent() {
	r.data = r.data[:0]
	r.name = ""
	r.retry, r.hasRetry = 0, false
}

// field processes one non-blank line.
func (r *Reader) field(line []byte) {
	if line[0] == ':' {
		return // a comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
	case "event":
		r.name = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.idBuf = string(value)
		}
	case "retry":
		if d, ok := parseRetry(value); ok {
			r.retry, r.hasRetry = d, true
			r.streamRetry, r.hasStream = d, true
		}
	}
}

// parseRetry reads a retry value: only ASCII digits, milliseconds.
// Values too large for a Duration saturate.
func parseRetry(v []byte) (time.Duration, bool) {
	if len(v) == 0 {
		return 0, false
	}
	const limit = math.MaxInt64 / int64(time.Millisecond)
	var ms int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		if ms <= limit {
			ms = ms*10 + int64(c-'0')
		}
	}
	if ms > limit {
		return math.MaxInt64, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// more makes unread bytes available, reading r when buf is drained; it
// consumes the LF of a CRLF and the leading byte order mark. It returns
// the reading error once nothing is left.
func (r *Reader) more() error {
	for {
		if r.pos == r.end {
			if r.rerr != nil {
				return r.rerr
			}
			r.pos, r.end = 0, 0
			r.fill()
			continue
		}
		if r.skipLF {
			r.skipLF = false
			if r.buf[r.pos] == '\n' {
				r.pos++
				continue
			}
		}
		if !r.started {
			// "One leading U+FEFF BYTE ORDER MARK character must be
			// ignored if any are present."
			avail := r.buf[r.pos:r.end]
			if bytes.HasPrefix(avail, bom) {
				r.pos += len(bom)
				r.started = true
				continue
			}
			if len(avail) < len(bom) && bytes.HasPrefix(bom, avail) && r.rerr == nil {
				r.fill() // at the start: pos is 0, buf has room
				continue
			}
			r.started = true
		}
		return nil
	}
}

// fill reads into buf[end:]; it needs room there.
func (r *Reader) fill() {
	for range 100 {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}

// readLine returns the next line, without its end. The line is valid
// until the next call. A line longer than budget gives ErrEventTooLarge
// as soon as that is known; the rest of the line is left to skipLine.
//
// Input arriving in small pieces costs no more than in large ones: the
// bytes of a partial line are scanned once, and moved at most once
// within buf before they go to the long line buffer.
func (r *Reader) readLine(budget int) ([]byte, error) {
	if cap(r.long) > 1<<20 {
		r.long = nil // do not keep a huge line's buffer for good
	}
	r.long = r.long[:0]
	scanned := 0 // how much of buf[pos:end] is known to hold no line end
	for {
		if err := r.more(); err != nil {
			return nil, err
		}
		chunk := r.buf[r.pos:r.end]
		if i := bytes.IndexAny(chunk[scanned:], "\r\n"); i >= 0 {
			i += scanned
			r.pos += i + 1
			r.skipLF = chunk[i] == '\r'
			line := chunk[:i]
			if len(r.long) > 0 {
				r.long = append(r.long, line...)
				line = r.long
			}
			if len(line) > budget {
				return nil, ErrEventTooLarge
			}
			return line, nil
		}
		scanned = len(chunk)
		if len(r.long)+len(chunk) > budget {
			r.pos = r.end
			r.midLine = true
			return nil, ErrEventTooLarge
		}
		if r.rerr != nil {
			// The stream ended within the line: it is dropped.
			r.pos = r.end
			return nil, r.rerr
		}
		if r.end == len(r.buf) {
			if r.pos == 0 {
				// A line longer than buf.
				r.long = append(r.long, chunk...)
				r.pos, r.end, scanned = 0, 0, 0
				continue
			}
			r.end = copy(r.buf, chunk)
			r.pos = 0
		}
		r.fill()
	}
}

// skipLine consumes the next line without keeping it (or the rest of
// the line an overflow stopped in) and reports whether it was blank.
func (r *Reader) skipLine() (blank bool, err error) {
	blank = !r.midLine
	for {
		if err := r.more(); err != nil {
			return false, err
		}
		chunk := r.buf[r.pos:r.end]
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			blank = false
			r.midLine = true
			r.pos = r.end
			continue
		}
		if i > 0 {
			blank = false
		}
		r.pos += i + 1
		r.skipLF = chunk[i] == '\r'
		r.midLine = false
		return blank, nil
	}
}
