package streamablehandler

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/httpdeadline"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// session is one legacy Streamable HTTP session. It is the [jsonrpc.Stream]
// of a [jsonrpc2.Conn] run by the server: POSTs feed Read, and Write routes
// each outgoing message to the HTTP response it belongs to — a response to
// its request's stream, a message about a request to that request's
// stream, anything else to the GET stream.
type session struct {
	h    *Handler
	id   string
	conn *jsonrpc2.Conn
	srv  *server.Session

	closed    chan struct{}
	closeOnce sync.Once
	// ready is set once the client sent notifications/initialized: a
	// full table sheds the sessions without it first.
	ready atomic.Bool
	// client is who opened the session (intercept.ClientKey): a full
	// table sheds the sessions of the client with the most first.
	client string

	mu         sync.Mutex
	streams    map[int64]*stream
	byRequest  map[jsonrpc.ID]*stream
	standalone *stream
	nextStream int64
	readers    atomic.Int64 // numbers the HTTP requests that write streams (stream.reader)
	store      eventStore
	active     atomic.Int32 // HTTP requests being served
	lastActive atomic.Int64 // when one last began or ended (Unix ns)
	idle       *time.Timer
}

// stream is one SSE stream of a session (or a response not yet known to
// need one).
type stream struct {
	num   int64
	req   jsonrpc.ID // zero for the GET stream
	sse   bool       // its events go to the store and out as SSE
	early []event    // messages queued before that was decided (data and keep only)
	seq   int64      // last sequence number given out
	final bool       // the response was queued
	done  bool       // its response was written out
	// hangUp asks the HTTP request writing the stream to end (the stream
	// itself goes on, to be resumed with Last-Event-ID).
	hangUp bool
	wake   chan struct{}
	reader int64 // generation of the HTTP request writing it; 0 when none
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

func newSessionID() string {
	b := make([]byte, 24)
	rand.Read(b)
	// "The session ID MUST only contain visible ASCII characters."
	return base64.RawURLEncoding.EncodeToString(b)
}

// initialize opens a session for an initialize request.
func (h *Handler) initialize(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, lent lentBody) {
	s := &session{
		h: h, id: newSessionID(), closed: make(chan struct{}),
		streams: map[int64]*stream{}, byRequest: map[jsonrpc.ID]*stream{},
		store:  eventStore{limit: h.opts.EventStoreBytes},
		client: intercept.ClientKey(r.Context(), r.RemoteAddr),
	}
	s.lastActive.Store(time.Now().UnixNano())
	if status, msg := h.admit(s); status != 0 {
		writeError(w, status, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg})
		return
	}
	s.conn, s.srv = h.server.ConnectSession(context.Background(), s, s.id)
	if t := h.opts.SessionIdleTimeout; t > 0 {
		s.idle = time.AfterFunc(t, s.expire)
	}
	s.servePost(w, r, m, lent)
	if !s.srv.Initialized() {
		s.close()
	}
}

// admit adds a session to the table. A full table first sheds idle
// sessions (no request being served, no stream open) of the client with
// the most sessions, the newcomer's own on a tie: those whose client
// never completed the handshake first, then those idle longest. An
// authenticated caller keeps callerSessionFloor of its sessions. It
// answers 503 only when no session can go, so that neither a flood of
// bare initialize requests nor one of complete handshakes locks out or
// ends the sessions of the clients that come after it.
func (h *Handler) admit(s *session) (status int, msg string) {
	for range 3 {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			return http.StatusServiceUnavailable, "the server is shutting down"
		}
		if len(h.sessions) < h.opts.MaxSessions {
			h.sessions[s.id] = s
			h.mu.Unlock()
			return 0, ""
		}
		victims := h.idlest(s.client, max(1, h.opts.MaxSessions/64))
		h.mu.Unlock()
		if len(victims) == 0 {
			break
		}
		h.log.Warn("streamable: the session table is full: ending idle sessions", "sessions", h.opts.MaxSessions, "ended", len(victims))
		for _, v := range victims {
			v.close()
		}
	}
	return http.StatusServiceUnavailable, "too many sessions, all of them busy"
}

// callerSessionFloor is how many of its sessions an authenticated caller
// keeps when a full table sheds sessions.
const callerSessionFloor = 8

// idlest returns up to n idle sessions of one client to make room for a
// session of newcomer: of the client with the most sessions that has
// some to spare. Callers hold h.mu.
func (h *Handler) idlest(newcomer string, n int) []*session {
	byClient := map[string][]*session{}
	for _, s := range h.sessions {
		byClient[s.client] = append(byClient[s.client], s)
	}
	clients := slices.SortedFunc(maps.Keys(byClient), func(a, b string) int {
		if c := cmp.Compare(len(byClient[b]), len(byClient[a])); c != 0 {
			return c
		}
		switch newcomer {
		case a:
			return -1
		case b:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, c := range clients {
		if victims := spare(byClient[c], c, n); len(victims) > 0 {
			return victims
		}
	}
	return nil
}

// spare returns up to n idle sessions of one client's, those that never
// completed the handshake first, then the longest idle, leaving an
// authenticated caller callerSessionFloor of them.
func spare(sessions []*session, client string, n int) []*session {
	if strings.HasPrefix(client, "caller:") {
		n = min(n, len(sessions)-callerSessionFloor)
	}
	if n <= 0 {
		return nil
	}
	idle := slices.DeleteFunc(sessions, func(s *session) bool { return s.active.Load() != 0 })
	slices.SortFunc(idle, func(a, b *session) int {
		if ra, rb := a.ready.Load(), b.ready.Load(); ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.lastActive.Load(), b.lastActive.Load())
	})
	return idle[:min(n, len(idle))]
}

// expire ends the session after its idle timeout, unless it is busy.
// Requests only note the time (resetting a timer on every request would
// cost more than the rest of a small one); the timer checks it when it
// fires.
func (s *session) expire() {
	timeout := s.h.opts.SessionIdleTimeout
	idleFor := time.Duration(time.Now().UnixNano() - s.lastActive.Load())
	if s.active.Load() > 0 || idleFor < timeout {
		s.idle.Reset(max(timeout-idleFor, timeout/10))
		return
	}
	s.h.log.Debug("streamable: session expired", "session", s.id)
	s.close()
}

func (s *session) begin() {
	s.active.Add(1)
	s.lastActive.Store(time.Now().UnixNano())
}

func (s *session) end() {
	s.active.Add(-1)
	s.lastActive.Store(time.Now().UnixNano())
}

// close ends the session from the transport's side: its Conn closes
// too, cancelling the handlers in flight.
func (s *session) close() {
	s.shut()
	if s.conn != nil {
		s.conn.Close()
	}
}

// shut marks the session ended. The Conn calls it (as the stream's Close)
// when it closes, so it must not call back into the Conn.
func (s *session) shut() {
	s.closeOnce.Do(func() {
		s.h.mu.Lock()
		delete(s.h.sessions, s.id)
		s.h.mu.Unlock()
		if s.idle != nil {
			s.idle.Stop()
		}
		close(s.closed)
	})
}

// PushesMessages tells the Conn that POSTs hand it their messages
// (deliver) rather than it reading them: an idle session holds no
// goroutine (jsonrpcapi.Pusher).
func (s *session) PushesMessages() {}

// Read is not called: the session pushes its messages.
func (s *session) Read() (*jsonrpc.Message, error) {
	<-s.closed
	return nil, io.EOF
}

// Close is called by the Conn when it closes.
func (s *session) Close() error {
	s.shut()
	return nil
}

// Write routes an outgoing message to its stream.
func (s *session) Write(ctx context.Context, m *jsonrpc.Message) error {
	b, err := jsonrpc.AppendMessage(getBuf(), m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var st *stream
	if m.IsResponse() {
		st = s.byRequest[m.ID]
		delete(s.byRequest, m.ID)
		if st == nil {
			return nil // its request's stream is gone (e.g. a duplicate id)
		}
	} else if id, ok := jsonrpc.RequestID(ctx); ok {
		// "These messages SHOULD relate to the originating client
		// request": they go on its stream while it is open.
		st = s.byRequest[id]
	}
	if st == nil {
		st = s.standalone
	}
	if st == nil {
		return fmt.Errorf("streamable: no stream to send %s on: the client has no GET stream open", describe(m))
	}
	s.push(st, b, m.IsResponse(), !m.IsNotification())
	return nil
}

func describe(m *jsonrpc.Message) string {
	if m.Method != "" {
		return m.Method
	}
	return "a response"
}

// push queues an encoded message on a stream; keep marks one that must
// not be dropped to make room for notifications (an answer, a request).
// Callers hold s.mu.
func (s *session) push(st *stream, b []byte, final, keep bool) {
	b = fit(b)
	if st.sse {
		st.seq++
		e := event{stream: st.num, seq: st.seq, data: b, keep: keep}
		s.store.add(e)
		s.record(st, e, final)
	} else {
		st.early = append(st.early, event{data: b, keep: keep})
	}
	if final {
		st.final = true
	}
	st.signal()
}

// fit returns b in memory of its own size, giving the pooled buffer it
// was encoded in back: an event may stay in the store for resumption
// long after it was sent, and a message of a hundred bytes would hold a
// buffer of 4 KiB there, forty times what the store's budget counts.
func fit(b []byte) []byte {
	if cap(b)-len(b) <= len(b)/8 {
		return b
	}
	c := make([]byte, len(b))
	copy(c, b)
	putBuf(b)
	return c
}

// newStream registers a stream. Callers hold s.mu.
func (s *session) newStream(req jsonrpc.ID) *stream {
	if s.nextStream%64 == 63 {
		// Forget finished streams whose events the store dropped, so
		// that a long session does not accumulate them.
		for num, st := range s.streams {
			if st.done && st.reader == 0 && !s.store.has(num) {
				delete(s.streams, num)
			}
		}
	}
	if s.nextStream == 0 {
		s.nextStream = s.h.firstStream()
	}
	s.nextStream++
	st := &stream{num: s.nextStream, req: req, wake: make(chan struct{}, 1)}
	s.streams[st.num] = st
	if req.IsValid() {
		s.byRequest[req] = st
	}
	return st
}

// servePost serves a POST of a legacy session. The handler of a request
// gives lent back once nothing reads m any more.
func (s *session) servePost(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, lent lentBody) {
	if v := r.Header.Get(streamwire.HeaderProtocolVersion); v != "" && m.Method != protocol.MethodInitialize &&
		(!protocol.IsSupported(v) || protocol.IsStateless(v)) {
		// "If the server receives a request with an invalid or
		// unsupported MCP-Protocol-Version, it MUST respond with 400."
		writeError(w, http.StatusBadRequest, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unsupported MCP-Protocol-Version %q", v))
		return
	}
	s.begin()
	defer s.end()
	w.Header().Set(streamwire.HeaderSessionID, s.id)
	// The session's handlers run on its context: the POST's values (what
	// an HTTP middleware put there) and header go with the message.
	m.Context = &serverapi.Origin{Context: r.Context(), Header: r.Header, RemoteAddr: r.RemoteAddr}
	if !m.IsRequest() {
		// "If the server accepts the input, the server MUST return HTTP
		// status code 202 Accepted with no body."
		if !s.deliver(m) {
			writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session closed"})
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.mu.Lock()
	if _, dup := s.byRequest[m.ID]; dup {
		s.mu.Unlock()
		writeError(w, http.StatusConflict, m.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "request id %s is already in use in this session", m.ID))
		return
	}
	st := s.newStream(m.ID)
	s.mu.Unlock()
	// The handler runs on a goroutine of its own, and this one writes
	// what it sends, so that the response can end before the handler
	// does: when it closes its stream (CloseRequestStream), or the client
	// goes away. Its answer then waits in the store for the client's GET
	// with Last-Event-ID.
	s.begin()
	go s.handle(st, m, lent)
	s.serveStream(w, r, st, 0, true)
}

// handle runs a request's handler and queues its answer on the request's
// stream.
func (s *session) handle(st *stream, m *jsonrpc.Message, lent lentBody) {
	defer s.end()
	reply := jsonrpc2.Serve(s.conn, m)
	var body []byte
	if reply != nil {
		b, err := jsonrpc.AppendMessage(getBuf(), reply)
		if err != nil {
			b, _ = jsonrpc.AppendMessage(b[:0], &jsonrpc.Message{ID: m.ID, Error: jsonrpc.AsError(err)})
		}
		body = b
	}
	s.h.release(lent) // the answer is encoded: nothing reads the request now
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byRequest[m.ID] == st {
		delete(s.byRequest, m.ID)
	}
	if body != nil {
		s.push(st, body, true, true)
		return
	}
	// Cancelled by the client: no answer to give.
	st.final = true
	st.signal()
}

// deliver hands a message to the Conn.
func (s *session) deliver(m *jsonrpc.Message) bool {
	if m.Method == protocol.NotificationInitialized {
		s.ready.Store(true)
	}
	return jsonrpc2.Receive(s.conn, m)
}

func (s *session) forget(st *stream) {
	s.mu.Lock()
	delete(s.streams, st.num)
	if st.req.IsValid() && s.byRequest[st.req] == st {
		delete(s.byRequest, st.req)
	}
	s.mu.Unlock()
}

// CloseRequestStream ends the HTTP response that carries request id's
// stream, which turns into an event stream if it was not one yet; the
// request goes on and the client resumes with GET and Last-Event-ID. See
// server.Request.CloseStream.
func (s *session) CloseRequestStream(id jsonrpc.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.byRequest[id]
	if st == nil {
		return false
	}
	if st.sse && st.reader == 0 {
		// No connection carries the stream (the client has not resumed
		// it yet): there is none to end, and a hang-up kept for later
		// would end the client's next one at once.
		return true
	}
	st.hangUp = true
	st.signal()
	return true
}

// serveGet opens the session's GET stream, or resumes a stream after
// Last-Event-ID: "If the client wishes to resume after a disconnection
// ... it SHOULD issue an HTTP GET to the MCP endpoint, and include the
// Last-Event-ID header."
func (s *session) serveGet(w http.ResponseWriter, r *http.Request) {
	s.begin()
	defer s.end()
	w.Header().Set(streamwire.HeaderSessionID, s.id)
	if last := r.Header.Get(streamwire.HeaderLastEventID); last != "" {
		num, seq, ok := parseEventID(last)
		s.mu.Lock()
		st := s.streams[num]
		s.mu.Unlock()
		if !ok || st == nil {
			if ok && s.resumeLogged(w, r, num, seq) {
				return
			}
			writeError(w, http.StatusNotFound, jsonrpc.ID{}, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "unknown or expired event id %q", last))
			return
		}
		s.serveStream(w, r, st, seq, false)
		return
	}
	s.mu.Lock()
	st := s.standalone
	if st != nil && st.reader != 0 {
		s.mu.Unlock()
		// One GET stream per session: "The server MUST send each of its
		// JSON-RPC messages on only one of the connected streams."
		writeError(w, http.StatusConflict, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a GET stream is already open for this session"})
		return
	}
	if st == nil {
		st = s.newStream(jsonrpc.ID{})
		st.sse = true
		s.standalone = st
	}
	s.mu.Unlock()
	s.serveStream(w, r, st, st.seq, false)
}

// writeRetry announces the reconnection delay: "If the server does close
// the connection prior to terminating the SSE stream, it SHOULD send an
// SSE event with a standard retry field before closing the connection."
// A block without data sets the client's delay and dispatches nothing.
func (s *session) writeRetry(w http.ResponseWriter) {
	b := strconv.AppendInt([]byte("retry: "), s.h.opts.Retry.Milliseconds(), 10)
	httpdeadline.Write(w, s.h.opts.WriteTimeout)
	w.Write(append(b, "\n\n"...))
	flush(w)
}

func eventID(num, seq int64) string {
	return strconv.FormatInt(num, 10) + "-" + strconv.FormatInt(seq, 10)
}

func parseEventID(id string) (num, seq int64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 64)
	q, err2 := strconv.ParseInt(b, 10, 64)
	return n, q, err1 == nil && err2 == nil
}

// serveStream writes a stream to one HTTP response, from after seq, until
// its response was written (request streams), the client goes away, or
// the session ends. A request stream whose only message is its response
// is answered as plain JSON when allowJSON is set.
func (s *session) serveStream(w http.ResponseWriter, r *http.Request, st *stream, after int64, allowJSON bool) {
	gen := s.readers.Add(1)
	s.mu.Lock()
	if st.reader != 0 {
		// A resumed stream takes over from the connection it replaces.
		st.signal()
	}
	st.reader = gen
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if st.reader == gen {
			st.reader = 0
		}
		s.mu.Unlock()
	}()

	// Keep-alive comments start with the event stream: a request answered
	// as plain JSON sets up no timer.
	var keepAlive <-chan time.Time
	var ticker *time.Ticker
	defer func() {
		if ticker != nil {
			ticker.Stop()
		}
	}()
	started := false
	written := after
	var buf []byte
	for {
		s.mu.Lock()
		if st.reader != gen {
			s.mu.Unlock()
			return // replaced by a resumed connection
		}
		if !st.sse && (len(st.early) > 0 || st.hangUp) {
			if allowJSON && !s.h.opts.AlwaysSSE && st.final && len(st.early) == 1 {
				body := st.early[0].data
				st.early = nil
				delete(s.streams, st.num)
				s.mu.Unlock()
				writeJSON(w, http.StatusOK, body, s.h.opts.WriteTimeout)
				putBuf(body) // nothing else refers to it: not an event
				return
			}
			// Something comes before the response: switch to SSE, the
			// queued messages becoming the stream's first events.
			st.sse = true
			for i, e := range st.early {
				st.seq++
				e.stream, e.seq = st.num, st.seq
				s.store.add(e)
				s.record(st, e, st.final && i == len(st.early)-1)
			}
			st.early = nil
		}
		if !st.sse && st.final {
			// Cancelled by the client before it was sent anything: no
			// answer to give.
			delete(s.streams, st.num)
			s.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		var events []event
		lost := int64(0)
		last := written // the sequence number of the last event to write
		if st.sse {
			events = s.store.after(st.num, written)
			if len(events) > 0 {
				last = events[len(events)-1].seq
			}
			lost = last - written - int64(len(events))
		}
		finished := st.final && st.sse && last >= st.seq
		hangUp := st.hangUp && !finished
		st.hangUp = false
		s.mu.Unlock()

		if st.sse && !started {
			started = true
			if ka := s.h.opts.KeepAlive; ka > 0 {
				ticker = time.NewTicker(ka)
				keepAlive = ticker.C
			}
			httpdeadline.Write(w, s.h.opts.WriteTimeout)
			startSSE(w, http.StatusOK)
			if allowJSON {
				// "The server SHOULD immediately send an SSE event
				// consisting of an event ID and an empty data field in
				// order to prime the client to reconnect."
				buf = ssewire.AppendEvent(buf[:0], ssewire.Event{ID: eventID(st.num, 0), Retry: s.h.opts.Retry, HasRetry: true})
				w.Write(buf)
			}
			flush(w)
		}
		if lost > 0 {
			// The client reads slower than the server sends, and the store
			// dropped notifications it had not read: they are lost, the
			// answer and requests are not (see eventStore).
			s.h.log.Warn("streamable: notifications dropped for a client that reads slowly", "session", s.id, "dropped", lost)
		}
		if len(events) > 0 {
			buf = buf[:0]
			for _, e := range events {
				buf = appendEvent(buf, eventID(e.stream, e.seq), e.data)
				written = e.seq
			}
			httpdeadline.Write(w, s.h.opts.WriteTimeout)
			if _, err := w.Write(buf); err != nil {
				return
			}
			if flushed(w) != nil {
				return
			}
		}
		if finished {
			s.mu.Lock()
			st.done = true
			s.mu.Unlock()
			return
		}
		if hangUp {
			if !allowJSON {
				// The priming event of a POST's stream announced the
				// delay; a resumed stream announces it before it closes.
				s.writeRetry(w)
			}
			return
		}
		select {
		case <-st.wake:
		case <-keepAlive:
			httpdeadline.Write(w, s.h.opts.WriteTimeout)
			if _, err := w.Write(ssewire.AppendComment(nil, "")); err != nil {
				return
			}
			if flushed(w) != nil {
				return
			}
		case <-r.Context().Done():
			// "Disconnection SHOULD NOT be interpreted as the client
			// cancelling its request": the request runs on, and its
			// events wait in the store for a resumption. Before the
			// stream started there is nothing to resume.
			if !started {
				s.forget(st)
			}
			return
		case <-s.closed:
			return
		}
	}
}
