package ssehandler

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// session is one client connection: the event stream of a GET and the
// POSTs naming its id. It is the [jsonrpc.Stream] of the server's
// [jsonrpc2.Conn]: Read returns the POSTed messages, Write queues messages
// for the event stream.
type session struct {
	h    *Handler
	id   string
	conn *jsonrpc2.Conn

	in  chan *jsonrpc.Message // POSTed messages, for Read
	out chan []byte           // encoded events, for the event stream

	done     chan struct{} // closed when the Conn closed the stream
	doneOnce sync.Once
	kick     chan struct{} // closed to end the event stream (slow client, idle)
	kickOnce sync.Once
	idle     *time.Timer
}

// Read gives the Conn the next POSTed message; io.EOF once closed.
func (s *session) Read() (*jsonrpc.Message, error) {
	select {
	case m := <-s.in:
		return m, nil
	case <-s.done:
		return nil, io.EOF
	}
}

// Write queues m for the event stream: "Server messages are sent as SSE
// message events, with the message content encoded as JSON in the event
// data." It waits while the queue is full, up to SendTimeout, after which
// the client, which does not read, is disconnected.
func (s *session) Write(ctx context.Context, m *jsonrpc.Message) error {
	b, err := messageEvent(m)
	if err != nil {
		return err
	}
	select {
	case <-s.done:
		return errSessionClosed
	case s.out <- b:
		return nil
	default:
	}
	t := time.NewTimer(s.h.opts.SendTimeout)
	defer t.Stop()
	select {
	case s.out <- b:
		return nil
	case <-s.done:
		return errSessionClosed
	case <-s.kick:
		return errSessionClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		s.h.log.Warn("sse: disconnecting a client that does not read its event stream", "session", s.id, "timeout", s.h.opts.SendTimeout)
		s.end()
		return fmt.Errorf("sse: the client did not read its event stream for %v: disconnected", s.h.opts.SendTimeout)
	}
}

// Close is called by the Conn when it closes. It does not close the
// Conn: whoever ends the session closes the Conn, which calls Close.
func (s *session) Close() error {
	s.doneOnce.Do(func() { close(s.done) })
	return nil
}

// end makes the event stream return, which closes the session.
func (s *session) end() { s.kickOnce.Do(func() { close(s.kick) }) }

// deliver hands a POSTed message to the Conn.
func (s *session) deliver(ctx context.Context, m *jsonrpc.Message) error {
	select {
	case <-s.done:
		return errSessionClosed
	default:
	}
	if s.idle != nil {
		s.idle.Reset(s.h.opts.SessionIdleTimeout)
	}
	select {
	case s.in <- m:
		return nil
	case <-s.done:
		return errSessionClosed
	case <-s.kick:
		return errSessionClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// messageEvent encodes m as a message event.
func messageEvent(m *jsonrpc.Message) ([]byte, error) {
	const prefix = "event: message\ndata: "
	b, err := jsonrpc.AppendMessage(append(make([]byte, 0, 256), prefix...), m)
	if err != nil {
		return nil, err
	}
	if data := b[len(prefix):]; bytes.ContainsAny(data, "\r\n") {
		// Raw members with line breaks between their tokens: one data
		// line each.
		return ssewire.AppendEvent(nil, ssewire.Event{Name: "message", Data: data}), nil
	}
	return append(b, '\n', '\n'), nil
}

// serveEvents opens a session and serves its event stream until the
// client goes away, the session's connection closes, or the client is
// disconnected for not reading.
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the Accept header must admit text/event-stream"))
		return
	}
	s := &session{
		h:    h,
		id:   rand.Text(),
		in:   make(chan *jsonrpc.Message, 16),
		out:  make(chan []byte, h.opts.MaxQueued),
		done: make(chan struct{}),
		kick: make(chan struct{}),
	}
	if t := h.opts.SessionIdleTimeout; t > 0 {
		s.idle = time.AfterFunc(t, s.end)
		defer s.idle.Stop()
	}
	// The session's handlers see the GET's context values (such as what
	// an authentication middleware put there); its end closes the Conn.
	s.conn, _ = h.server.ConnectSession(r.Context(), s, s.id)
	defer s.conn.Close()
	if status, msg := h.register(s); status != 0 {
		writeError(w, status, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "%s", msg))
		return
	}
	defer h.unregister(s)
	h.log.Debug("sse: session opened", "session", s.id, "remote", r.RemoteAddr)

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("X-Accel-Buffering", "no") // proxies: pass events on at once
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	// "When a client connects, the server MUST send an endpoint event
	// containing a URI for the client to use for sending messages."
	buf := ssewire.AppendEvent(nil, ssewire.Event{Name: "endpoint", Data: []byte(h.endpointURI(r, s.id))})
	if !s.send(w, rc, buf) {
		return
	}
	var keepAlive <-chan time.Time
	if ka := h.opts.KeepAlive; ka > 0 {
		t := time.NewTicker(ka)
		defer t.Stop()
		keepAlive = t.C
	}
	for {
		select {
		case b := <-s.out:
			buf = s.batch(append(buf[:0], b...))
			if !s.send(w, rc, buf) {
				return
			}
		case <-keepAlive:
			if !s.send(w, rc, ssewire.AppendComment(buf[:0], "")) {
				return
			}
		case <-s.done:
			// The server closed the session: send what it queued last.
			if buf = s.batch(buf[:0]); len(buf) > 0 {
				s.send(w, rc, buf)
			}
			return
		case <-s.kick:
			return
		case <-r.Context().Done():
			h.log.Debug("sse: client went away", "session", s.id)
			return
		}
	}
}

// batch appends the queued events to buf, up to a reasonable write.
func (s *session) batch(buf []byte) []byte {
	for len(buf) < 64<<10 {
		select {
		case b := <-s.out:
			buf = append(buf, b...)
		default:
			return buf
		}
	}
	return buf
}

// send writes b to the event stream and flushes it, giving the client
// SendTimeout to take it.
func (s *session) send(w http.ResponseWriter, rc *http.ResponseController, b []byte) bool {
	rc.SetWriteDeadline(time.Now().Add(s.h.opts.SendTimeout))
	if _, err := w.Write(b); err != nil {
		s.h.log.Debug("sse: writing the event stream", "session", s.id, "error", err)
		return false
	}
	if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.h.log.Debug("sse: flushing the event stream", "session", s.id, "error", err)
		return false
	}
	return true
}

// accepts reports whether the request's Accept header admits media type
// mt. No Accept header admits everything.
func accepts(r *http.Request, mt string) bool {
	values := r.Header.Values("Accept")
	if len(values) == 0 {
		return true
	}
	major, _, _ := strings.Cut(mt, "/")
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			t, _, _ := strings.Cut(part, ";")
			t = strings.ToLower(strings.TrimSpace(t))
			if t == mt || t == "*/*" || t == major+"/*" {
				return true
			}
		}
	}
	return false
}
