package websocket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Subprotocol is the WebSocket subprotocol of MCP, the one the TypeScript
// SDK's WebSocketClientTransport asks for.
const Subprotocol = "mcp"

// ErrClosed is returned by Read and Write on a stream closed by this side.
var ErrClosed = errors.New("websocket: stream closed")

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
	ctx  context.Context
	stop context.CancelFunc // ends the keep-alive pings

	closeOnce sync.Once
	closed    chan struct{}
	cause     error // why it was shut; set before closed is closed
	readErr   error // sticky; only Read touches it
}

func newStream(c *websocket.Conn, lim jsonrpc.Limits, keepAlive time.Duration) *stream {
	s := &stream{c: c, lim: lim, max: jsonrpcapi.MaxSize(lim.MaxSize), closed: make(chan struct{})}
	// The library's own bound cuts a message that is far too large
	// (closing the connection); below it, Read reports an oversized
	// message as one bad message and the stream goes on.
	c.SetReadLimit(int64(s.max) * discardFactor)
	s.ctx, s.stop = context.WithCancel(context.Background())
	if keepAlive > 0 {
		go s.keepAlive(keepAlive)
	}
	return s
}

// Read returns the next message. A message over the size limit is read
// to its end, dropped, and reported as a *[jsonrpc.DecodeError], so that
// the peer gets an error answer and the connection goes on. When the peer
// closes the connection normally Read returns io.EOF.
func (s *stream) Read() (*jsonrpc.Message, error) {
	if s.readErr != nil {
		return nil, s.readErr
	}
	// The background context: cancelling the one given to Reader would
	// close the connection; Close unblocks the read instead.
	_, r, err := s.c.Reader(context.Background())
	if err != nil {
		s.readErr = s.endErr(err)
		return nil, s.readErr
	}
	buf := make([]byte, 0, 512)
	buf, err = readAtMost(buf, r, s.max)
	switch {
	case errors.Is(err, errTooLarge):
		n, derr := io.Copy(io.Discard, r)
		if derr != nil {
			s.readErr = s.endErr(derr)
			return nil, s.readErr
		}
		return nil, s.tooLarge(buf, len(buf)+int(n))
	case err != nil:
		s.readErr = s.endErr(err)
		return nil, s.readErr
	}
	return jsonrpc.Decode(buf, s.lim)
}

var errTooLarge = errors.New("message too large")

// tooLarge is the error for a message of n bytes over the limit, whose
// first bytes are prefix: with the message's id when the prefix has it,
// so that the sender of a request gets its error answer (and a call whose
// answer was too large fails) instead of waiting forever.
func (s *stream) tooLarge(prefix []byte, n int) error {
	tle := jsonrpcapi.TooLarge(n, s.max)
	_, err := jsonrpc.Decode(prefix, jsonrpc.Limits{MaxSize: len(prefix) + 1, MaxDepth: s.lim.MaxDepth})
	var de *jsonrpc.DecodeError
	var tde *jsonrpc.DecodeError
	if errors.As(err, &de) && de.ID.IsValid() && errors.As(tle, &tde) {
		de.Err = tde.Err
		return de
	}
	return tle
}

// readAtMost appends r's bytes to buf, up to max; errTooLarge when there
// are more.
func readAtMost(buf []byte, r io.Reader, max int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) > max {
				return buf, errTooLarge
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > max {
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
	s.shut(ErrClosed, func() { s.c.Close(code, reason) })
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
