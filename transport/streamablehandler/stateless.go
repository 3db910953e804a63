package streamablehandler

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/httpdeadline"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// serveStateless serves one stateless POST: the request's own response
// stream carries its notifications and its response; closing it cancels
// the request ("Closing the SSE response stream MUST be treated by the
// server as cancellation of that request").
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	// The order of the checks follows the specification's: the version
	// header, the _meta fields, their agreement, the version's support,
	// then the other mirrored headers.
	if r.Header.Get(streamwire.HeaderProtocolVersion) == "" {
		writeError(w, http.StatusBadRequest, m.ID, mismatch("missing MCP-Protocol-Version header"))
		return
	}
	if m.IsRequest() {
		if err := h.server.CheckRequestMeta(m); err != nil {
			writeError(w, http.StatusBadRequest, m.ID, jsonrpc.AsError(err))
			return
		}
		v := jsonrpc2.Meta(m).ProtocolVersion
		if hv := r.Header.Get(streamwire.HeaderProtocolVersion); hv != v {
			writeError(w, http.StatusBadRequest, m.ID, mismatch("MCP-Protocol-Version header %q does not match _meta %s %q", hv, protocol.MetaProtocolVersion, v))
			return
		}
		if err := h.server.CheckVersion(v); err != nil {
			writeError(w, http.StatusBadRequest, m.ID, jsonrpc.AsError(err))
			return
		}
	}
	if e := h.checkHeaders(r, m, true); e != nil {
		writeError(w, http.StatusBadRequest, m.ID, e)
		return
	}
	switch {
	case m.IsResponse():
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "the stateless protocol has no server-to-client requests to answer"})
		return
	case m.IsNotification():
		h.server.HandleMessage(&serverapi.Origin{Context: r.Context(), Header: r.Header, RemoteAddr: r.RemoteAddr}, m, nil, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rs := &responder{h: h, w: w}
	rs.origin = serverapi.Origin{Context: r.Context(), Header: r.Header, RemoteAddr: r.RemoteAddr}
	if h.opts.AlwaysSSE {
		rs.startSSE()
	}
	// The handler's context is the POST's, with its header for
	// server.Request.Header.
	res, err := h.server.HandleMessage(&rs.origin, m, nil, rs)
	rs.finish(m.ID, res, err)
}

// statusFor maps a stateless error to its HTTP status: 400 for the errors
// the specification ties to it (header mismatch, missing capability,
// unsupported version, malformed request), 404 for an unknown method
// ("it MUST respond with 404 Not Found and a JSON-RPC error with code
// -32601"), and 200 for errors of the operation itself.
func statusFor(e *jsonrpc.Error) int {
	switch e.Code {
	case protocol.CodeHeaderMismatch, protocol.CodeMissingRequiredClientCapability, protocol.CodeUnsupportedProtocolVersion,
		jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError, jsonrpc.CodeInvalidParams:
		return http.StatusBadRequest
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	}
	return http.StatusOK
}

// responder is the [serverapi.Peer] of one stateless request: it answers with
// plain JSON unless something must be sent before the response, and then
// switches to an event stream.
type responder struct {
	h    *Handler
	w    http.ResponseWriter
	mu   sync.Mutex
	sse  bool
	over bool   // the response was written, or the client went away
	buf  []byte // the encoded message
	ev   []byte // the event carrying it
	done chan struct{}
	// origin is the handler's context: the POST's, with its header (in
	// the responder's allocation).
	origin serverapi.Origin
}

func (rs *responder) startSSE() {
	rs.sse = true
	httpdeadline.Write(rs.w, rs.h.opts.WriteTimeout)
	startSSE(rs.w, http.StatusOK)
	flush(rs.w)
	if ka := rs.h.opts.KeepAlive; ka > 0 {
		rs.done = make(chan struct{})
		go rs.keepAlive(ka)
	}
}

// keepAlive sends SSE comments on a quiet stream, so that proxies and
// client idle timeouts leave it open (a subscriptions/listen stream can
// be quiet for hours).
func (rs *responder) keepAlive(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-rs.done:
			return
		case <-t.C:
			if !rs.mu.TryLock() {
				continue // a message is being written: the stream is not quiet
			}
			if !rs.over {
				httpdeadline.Write(rs.w, rs.h.opts.WriteTimeout)
				if _, err := rs.w.Write(ssewire.AppendComment(nil, "")); err != nil || flushed(rs.w) != nil {
					rs.over = true // the client went away, or stopped reading
				}
			}
			rs.mu.Unlock()
		}
	}
}

// Notify sends a notification about the request on its response stream.
func (rs *responder) Notify(ctx context.Context, method string, params any) error {
	m := &jsonrpc.Message{Method: method}
	if raw, ok := params.(jsontext.Value); ok {
		m.Params = raw
	} else if params != nil {
		m.Body = params
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.over {
		return errClosed
	}
	b, err := jsonrpc.AppendMessage(rs.buf[:0], m)
	if err != nil {
		return err
	}
	rs.buf = b
	if !rs.sse {
		rs.startSSE()
	}
	rs.ev = appendEvent(rs.ev[:0], "", b)
	httpdeadline.Write(rs.w, rs.h.opts.WriteTimeout)
	if _, err = rs.w.Write(rs.ev); err == nil {
		err = flushed(rs.w)
	}
	if err != nil {
		rs.over = true
	}
	return err
}

// Call is not available: "The server MUST NOT send independent JSON-RPC
// requests on this stream."
func (rs *responder) Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error) {
	return nil, errors.New("server-to-client requests do not exist in the stateless protocol; use input_required")
}

func (rs *responder) finish(id jsonrpc.ID, res any, err error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done != nil {
		defer close(rs.done)
	}
	if rs.over {
		return
	}
	rs.over = true
	reply := &jsonrpc.Message{ID: id}
	status := http.StatusOK
	switch {
	case err != nil:
		reply.Error = jsonrpc.AsError(err)
		status = statusFor(reply.Error)
	case res == nil:
		reply.Result = jsontext.Value("{}")
	default:
		if raw, ok := res.(jsontext.Value); ok {
			reply.Result = raw
		} else {
			reply.Body = res
		}
	}
	if rs.buf == nil {
		rs.buf = getBuf()
		defer func() { putBuf(rs.buf) }()
	}
	b, werr := jsonrpc.AppendMessage(rs.buf[:0], reply)
	if werr != nil {
		reply = &jsonrpc.Message{ID: id, Error: jsonrpc.AsError(werr)}
		b, _ = jsonrpc.AppendMessage(rs.buf[:0], reply)
		status = http.StatusInternalServerError
	}
	rs.buf = b
	if rs.sse {
		httpdeadline.Write(rs.w, rs.h.opts.WriteTimeout)
		rs.w.Write(appendEvent(rs.ev[:0], "", b))
		flush(rs.w)
		return
	}
	writeJSON(rs.w, status, b, rs.h.opts.WriteTimeout)
}

// bufs recycles the buffers answers are encoded into.
var bufs sync.Pool

func getBuf() []byte {
	if b, ok := bufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return make([]byte, 0, 4<<10)
}

// putBuf gives a buffer back, unless it is too large to keep around.
func putBuf(b []byte) {
	if cap(b) <= 1<<20 {
		bufs.Put(&b)
	}
}
