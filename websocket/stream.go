package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Subprotocol is the WebSocket subprotocol of MCP, the one the TypeScript
// SDK's WebSocketClientTransport asks for.
const Subprotocol = "mcp"

// discardFactor bounds how much of an oversized message is read and
// thrown away, in multiples of the size limit, before the connection is
// given up: a message a little too large costs the peer one error answer,
// a flood costs it the connection.
const discardFactor = 8

// stream carries one JSON-RPC message per WebSocket text message.
type stream struct {
	c    *websocket.Conn
	lim  jsonrpc.Limits
	max  int // lim's size bound in effect
	rb   readBounds
	ctx  context.Context
	stop context.CancelFunc // ends the keep-alive pings and the idle watch

	start   time.Time
	active  atomic.Int64 // when a message last came or went, since start
	pending atomic.Int64 // the peer's requests not answered yet

	closeOnce sync.Once
	closed    chan struct{}
	cause     error // why it was shut; set before closed is closed
	readErr   error // sticky; only Read touches it
}

// readBounds are what a server's stream bounds besides a message's size;
// the zero value bounds nothing (a client's stream).
type readBounds struct {
	messageTimeout time.Duration // reading a message once begun
	idle           time.Duration // no message either way, nothing pending
	memory         *shares       // bytes of the messages being read
	caller         string        // whose share of memory
}

func newStream(c *websocket.Conn, lim jsonrpc.Limits, keepAlive time.Duration, rb readBounds) *stream {
	s := &stream{c: c, lim: lim, max: jsonrpc2.MaxSize(lim.MaxSize), rb: rb, start: time.Now(), closed: make(chan struct{})}
	// The library's own bound cuts a message that is far too large
	// (closing the connection); below it, Read reports an oversized
	// message as one bad message and the stream goes on.
	c.SetReadLimit(int64(s.max) * discardFactor)
	s.ctx, s.stop = context.WithCancel(context.Background())
	if keepAlive > 0 {
		go s.keepAlive(keepAlive)
	}
	if rb.idle > 0 {
		go s.watchIdle(rb.idle)
	}
	return s
}

// errMessageTimeout is the cause of a message not read in time.
var errMessageTimeout = errors.New("message timeout")

// Read returns the next message. A message over the size limit, or one
// that does not fit in the memory left for messages being read, is read
// to its end, dropped, and reported as a *[jsonrpc.DecodeError], so that
// the peer gets an error answer and the connection goes on. A message not
// finished within the message timeout ends the connection. When the peer
// closes the connection normally Read returns io.EOF.
func (s *stream) Read() (*jsonrpc.Message, error) {
	if s.readErr != nil {
		return nil, s.readErr
	}
	// Cancelling the context given to Reader closes the connection: it is
	// cancelled only when a message begun is not finished in time. Close
	// unblocks a read waiting for a message.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	_, r, err := s.c.Reader(ctx)
	if err != nil {
		s.readErr = s.endErr(err)
		return nil, s.readErr
	}
	if s.rb.messageTimeout > 0 {
		t := time.AfterFunc(s.rb.messageTimeout, func() { cancel(errMessageTimeout) })
		defer t.Stop()
	}
	m, err := s.readMessage(r)
	if err != nil && context.Cause(ctx) == errMessageTimeout {
		err = fmt.Errorf("websocket: a message was not finished within %v", s.rb.messageTimeout)
		s.shut(err, func() { s.c.CloseNow() })
		s.readErr = err
	}
	if m != nil {
		s.touch()
		if m.IsRequest() {
			s.pending.Add(1)
		}
	}
	return m, err
}

// readMessage reads and decodes the message of r, its buffer's memory
// reserved for as long as it is read.
func (s *stream) readMessage(r io.Reader) (*jsonrpc.Message, error) {
	var reserved int64
	reserve := func(n int) bool {
		if s.rb.memory == nil {
			return true
		}
		if !s.rb.memory.reserve(s.rb.caller, int64(n)) {
			return false
		}
		reserved += int64(n)
		return true
	}
	defer func() {
		if reserved > 0 {
			s.rb.memory.release(s.rb.caller, reserved)
		}
	}()
	buf, err := readAtMost(r, s.max, reserve)
	switch {
	case errors.Is(err, errTooLarge), errors.Is(err, errNoMemory):
		prefix := buf
		if errors.Is(err, errNoMemory) {
			prefix = readPrefix(buf, r)
		}
		n, derr := io.Copy(io.Discard, r)
		if derr != nil {
			s.readErr = s.endErr(derr)
			return nil, s.readErr
		}
		if errors.Is(err, errNoMemory) {
			return nil, s.withID(prefix, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server busy: too many messages being read at once; retry later"})
		}
		return nil, s.tooLarge(buf, len(buf)+int(n))
	case err != nil:
		s.readErr = s.endErr(err)
		return nil, s.readErr
	}
	return jsonrpc.Decode(buf, s.lim)
}

var (
	errTooLarge = errors.New("message too large")
	errNoMemory = errors.New("no memory left for messages being read")
)

// tooLarge is the error for a message of n bytes over the limit, whose
// first bytes are prefix.
func (s *stream) tooLarge(prefix []byte, n int) error {
	tle := jsonrpc2.TooLarge(n, s.max)
	var tde *jsonrpc.DecodeError
	if !errors.As(tle, &tde) {
		return tle
	}
	return s.withID(prefix, tde.Err)
}

// withID is the *jsonrpc.DecodeError e for a message dropped unread,
// whose first bytes are prefix: with the message's id when the prefix has
// it, so that the sender of a request gets its error answer (and a call
// whose answer was dropped fails) instead of waiting forever.
func (s *stream) withID(prefix []byte, e *jsonrpc.Error) error {
	m, err := jsonrpc.Decode(prefix, jsonrpc.Limits{MaxSize: len(prefix) + 1, MaxDepth: s.lim.MaxDepth})
	if err == nil && m.ID.IsValid() { // the prefix is the whole message
		id, _ := m.ID.MarshalJSON()
		err = jsonrpc2.TooLargeID(len(prefix), len(prefix), id, m.Method != "")
	}
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) && de.ID.IsValid() {
		de.Err = e
		return de
	}
	return &jsonrpc.DecodeError{Err: e}
}

// idPrefix is how much of a message dropped for want of memory is read
// to find its id; held only while the message is dropped, it is not
// counted.
const idPrefix = 512

// readPrefix returns buf with r's next bytes, up to idPrefix in all.
func readPrefix(buf []byte, r io.Reader) []byte {
	if len(buf) >= idPrefix {
		return buf
	}
	p := make([]byte, idPrefix)
	n := copy(p, buf)
	m, _ := io.ReadFull(r, p[n:]) // an error recurs as the rest is dropped
	return p[:n+m]
}

// readAtMost reads r's bytes, up to limit: errTooLarge when there are
// more, errNoMemory when reserve refuses the memory of a larger buffer.
// The buffer grows by doubling, to limit+1 at most.
func readAtMost(r io.Reader, limit int, reserve func(n int) bool) ([]byte, error) {
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, errTooLarge
			}
			size := min(max(2*cap(buf), 512), limit+1)
			if !reserve(size - cap(buf)) {
				return buf, errNoMemory
			}
			buf = append(make([]byte, 0, size), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > limit {
			return buf, errTooLarge
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// endErr turns the error that ended reading into what Read reports.
func (s *stream) endErr(err error) error {
	if cerr := s.closedErr(); cerr != nil {
		return cerr
	}
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway:
		return io.EOF
	case -1:
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		return fmt.Errorf("websocket: %w", err)
	}
	return fmt.Errorf("websocket: the peer closed the connection: %w", err)
}

var encodeBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, 1024)
	return &b
}}

// maxPooledBuf bounds the encode buffers kept for reuse.
const maxPooledBuf = 1 << 20

// Write sends m as one text message. It is safe for concurrent use. The
// write itself is not bound to ctx (cancelling a write half done would
// have to close the connection): a peer that stops reading is found by
// the keep-alive pings, whose failure closes the connection.
func (s *stream) Write(ctx context.Context, m *jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cerr := s.closedErr(); cerr != nil {
		return cerr
	}
	bp := encodeBufs.Get().(*[]byte)
	b, err := jsonrpc.AppendMessage((*bp)[:0], m)
	if err == nil {
		err = s.c.Write(context.Background(), websocket.MessageText, b)
	}
	if err == nil {
		s.touch()
		if m.IsResponse() && m.ID.IsValid() {
			s.answered()
		}
	}
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		encodeBufs.Put(bp)
	}
	if err != nil {
		if cerr := s.closedErr(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("websocket: %w", err)
	}
	return nil
}

// Close closes the connection with a close handshake (status 1000), which
// waits a few seconds at most for the peer. It is idempotent.
func (s *stream) Close() error {
	return s.closeWith(websocket.StatusNormalClosure, "")
}

func (s *stream) closeWith(code websocket.StatusCode, reason string) error {
	s.shut(jsonrpc.ErrClosed, func() { s.c.Close(code, reason) })
	return nil
}

// shut closes the stream once, for cause, with how the connection ends.
func (s *stream) shut(cause error, end func()) {
	s.closeOnce.Do(func() {
		s.cause = cause
		close(s.closed)
		s.stop()
		end()
	})
}

// closedErr is the error of a stream that was shut.
func (s *stream) closedErr() error {
	select {
	case <-s.closed:
		return s.cause
	default:
		return nil
	}
}

// keepAlive pings the peer every interval and closes the connection when
// a pong does not come back within another interval: a dead peer, or one
// that stopped reading, is found and the writes blocked on it return.
func (s *stream) keepAlive(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(s.ctx, interval)
		err := s.c.Ping(ctx)
		cancel()
		if err != nil && s.ctx.Err() == nil {
			// No close handshake: the peer is not answering anyway.
			s.shut(fmt.Errorf("websocket: no answer to a ping within %v", interval), func() { s.c.CloseNow() })
			return
		}
	}
}

// touch records a message that came or went, for the idle watch.
func (s *stream) touch() { s.active.Store(int64(time.Since(s.start))) }

// answered counts one of the peer's requests as answered.
func (s *stream) answered() {
	for {
		n := s.pending.Load()
		if n <= 0 || s.pending.CompareAndSwap(n, n-1) {
			return
		}
	}
}

// watchIdle closes the connection once no message came or went for d
// while none of the peer's requests waited for its answer (a long tool
// call, a subscriptions/listen stream).
func (s *stream) watchIdle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		left := d - (time.Since(s.start) - time.Duration(s.active.Load()))
		if s.pending.Load() > 0 {
			left = d
		}
		if left <= 0 {
			s.shut(fmt.Errorf("websocket: idle for %v", d), func() { s.c.Close(websocket.StatusNormalClosure, "idle") })
			return
		}
		t.Reset(left)
	}
}
