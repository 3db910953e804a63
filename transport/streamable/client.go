// Package streamable reaches MCP servers over Streamable HTTP, in both
// protocol eras: [Transport] is the client side, which falls back to the
// HTTP+SSE transport of 2024-11-05 for a server that speaks only that.
// The server side is package transport/streamablehandler, apart so that a
// client links no server.
package streamable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/internal/bodytext"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/internal/redirect"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httperr"
	"github.com/ferrymcp/ferry/transport/sse"
)

// Transport reaches an MCP server over Streamable HTTP. It is a client
// transport (client.Transport): [client.Connect] with a Transport detects
// the server's era as the specification describes ("attempt a modern
// request and inspect the body of a 400 Bad Request before falling back"),
// and when even initialize is refused with 400, 404 or 405 without a
// stateless error body, the Transport falls back to the HTTP+SSE transport of
// 2024-11-05 on the same URL.
//
// A call fails with a *[jsonrpc.Error] only when the server answered it
// with a JSON-RPC error. A request refused with an HTTP status and no
// JSON-RPC error in the body fails with a *[httperr.StatusError] (a 401
// with its WWW-Authenticate header), and a network failure keeps its
// cause: errors.Is(err, syscall.ECONNREFUSED) for a server that is not
// listening, io.EOF or io.ErrUnexpectedEOF for one gone mid-answer. A
// redirect the Transport does not follow fails with a
// *[httperr.RedirectError].
type Transport struct {
	// URL is the MCP endpoint, e.g. "http://localhost:3000/mcp".
	URL string
	// Client makes the HTTP requests; nil means clients of its own with
	// no overall timeout (streams are long-lived; requests are bounded by
	// their contexts): for a plain http:// URL reached without a proxy, a
	// lean HTTP/1.1 client makes the POSTs, and net/http the rest.
	Client *http.Client
	// Header is added to every request (for example Authorization).
	Header http.Header
	// DisableReinitialize stops a legacy session from being opened again
	// by itself when the server forgot it (404 to a POST, or to the GET
	// stream's GET).
	DisableReinitialize bool
	// DisableGETStream stops the legacy GET stream that carries
	// server-initiated messages from being opened.
	DisableGETStream bool
	// DisableSSEFallback stops the fall back to HTTP+SSE.
	DisableSSEFallback bool
	// MaxEventBytes bounds one SSE event or JSON body (default 16 MiB).
	MaxEventBytes int
	// MaxReconnects bounds the attempts to resume a broken legacy stream
	// (default 5).
	MaxReconnects int
	// FollowRedirectsAcrossOrigins follows HTTP redirects to another
	// origin (scheme, host and port) than the URL's, without the
	// session id, Header, Authorization and cookies. By default the
	// Transport follows only redirects to the URL's own origin that keep
	// the request's method (307 and 308, such as /mcp to /mcp/); any
	// other fails with a *[httperr.RedirectError]. (A Client's own
	// CheckRedirect is consulted after this policy.)
	FollowRedirectsAcrossOrigins bool
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Open returns the stream of a new connection. Nothing is sent before the
// first message.
func (t *Transport) Open(ctx context.Context) (jsonrpc.Stream, error) {
	if t.URL == "" {
		return nil, errors.New("streamable: no URL")
	}
	cs := &clientStream{
		t:      t,
		hc:     t.Client,
		in:     make(chan *jsonrpc.Message, 64),
		closed: make(chan struct{}),
		max:    t.MaxEventBytes,
		log:    t.Logger,
	}
	if cs.hc == nil {
		cs.hc = defaultClient
		cs.h1 = newH1Client(t.URL)
	}
	cs.base, _ = url.Parse(t.URL)
	if cs.base == nil {
		cs.base = &url.URL{}
	}
	cs.redirects = &redirect.Policy{AcrossOrigins: t.FollowRedirectsAcrossOrigins, Strip: []string{streamwire.HeaderSessionID}, Log: t.Logger,
		// The session id goes where the session was opened, and only
		// there: after a redirect of initialize, that is the other origin.
		Keep: func(header string, to *url.URL) bool {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			return header == streamwire.HeaderSessionID && cs.sessionOrigin != nil && redirect.SameOrigin(to, cs.sessionOrigin)
		}}
	for k := range t.Header {
		cs.redirects.Strip = append(cs.redirects.Strip, k)
	}
	cs.hc = redirect.Client(cs.hc, cs.redirects)
	if cs.max <= 0 {
		cs.max = jsonrpc.DefaultMaxSize
	}
	cs.versionSet = t.Header.Get(streamwire.HeaderProtocolVersion) != ""
	if cs.log == nil {
		cs.log = slog.New(slog.DiscardHandler)
	}
	cs.ctx, cs.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return cs, nil
}

// clientStream is one connection over Streamable HTTP: every message is a
// POST, whose answer (JSON or an event stream) feeds Read.
type clientStream struct {
	t      *Transport
	hc     *http.Client
	h1     *h1Client // POSTs, when the endpoint allows; nil otherwise
	in     chan *jsonrpc.Message
	closed chan struct{}
	once   sync.Once
	ctx    context.Context // lives until Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	max    int
	log    *slog.Logger
	// answers recycles the bodies of answers given back with Recycle.
	answers streamwire.BodyPool
	// versionSet tells that the Transport's Header sets
	// MCP-Protocol-Version itself.
	versionSet bool
	// delivered counts the messages delivered from event streams.
	delivered atomic.Int64
	// getGaveUp tells that the legacy GET stream stopped after failing
	// again and again: the next request that succeeds opens it again.
	getGaveUp atomic.Bool
	// base is the URL parsed; redirects the policy of cs.hc.
	base      *url.URL
	redirects *redirect.Policy

	mu        sync.Mutex
	sessionID string // legacy session
	version   string // protocol version for the MCP-Protocol-Version header
	initBody  []byte // the initialize request, to open a new session after a 404
	initNote  []byte // the initialized notification, likewise
	getOpen   bool
	fallback  jsonrpc.Stream // HTTP+SSE, once fallen back
	head      []byte         // fixedHead's lines for headSID
	headSID   string
	headErr   error
	reinit    sync.Mutex
	// sessionOrigin is the URL that answered initialize with the
	// session id (another than base's after a redirect).
	sessionOrigin *url.URL
}

func (cs *clientStream) Read() (*jsonrpc.Message, error) {
	select {
	case m := <-cs.in:
		return m, nil
	case <-cs.closed:
		return nil, jsonrpc.ErrClosed
	}
}

func (cs *clientStream) Close() error {
	cs.once.Do(func() {
		cs.mu.Lock()
		sid, fb := cs.sessionID, cs.fallback
		cs.mu.Unlock()
		if fb != nil {
			fb.Close()
		}
		if sid != "" {
			// "Clients that no longer need a particular session ...
			// SHOULD send an HTTP DELETE to the MCP endpoint."
			ctx, cancel := context.WithTimeout(cs.ctx, 2*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, cs.t.URL, nil)
			if err == nil {
				cs.setHeaders(req.Header, sid)
				if resp, err := cs.hc.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			cancel()
		}
		cs.cancel()
		close(cs.closed)
		cs.wg.Wait()
		if cs.h1 != nil {
			cs.h1.close()
		}
	})
	return nil
}

// deliver hands a received message to Read.
func (cs *clientStream) deliver(ctx context.Context, m *jsonrpc.Message) bool {
	select {
	case cs.in <- m:
		return true
	case <-cs.closed:
		return false
	case <-ctx.Done():
		return false
	}
}

// setHeaders adds to a GET's h the stream's headers, the session's and
// the negotiated MCP-Protocol-Version, unless the Transport's Header sets it.
func (cs *clientStream) setHeaders(h http.Header, sid string) {
	cs.addStreamHeaders(h, sid)
	cs.mu.Lock()
	v := cs.version
	cs.mu.Unlock()
	if v != "" && !cs.versionSet {
		h.Set(streamwire.HeaderProtocolVersion, v)
	}
}

// addStreamHeaders adds to h the Transport's Header and, when sid is not
// "", the session's id.
func (cs *clientStream) addStreamHeaders(h http.Header, sid string) {
	for k, vs := range cs.t.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if sid != "" {
		h.Set(streamwire.HeaderSessionID, sid)
	}
}

// mirrored is implemented by message bodies whose values an HTTP transport
// mirrors into headers (the stateless MCP-Protocol-Version, Mcp-Name and
// Mcp-Param-* headers). The client package's request bodies implement it.
type mirrored interface {
	Mirror(set func(name, value string))
}

// MirrorsHeaders tells the client that this transport mirrors tool
// arguments into headers, so that it must refuse tools whose x-mcp-header
// annotations are invalid.
func (cs *clientStream) MirrorsHeaders() bool { return true }

// Request sends a request and returns its answer when it came alone (a
// JSON body): the Conn's Call then gets it without a detour through Read.
// When the answer came on an event stream with other messages, or was
// made up here, it is delivered through Read in order, and Request
// returns nil (jsonrpc.Requester).
func (cs *clientStream) Request(ctx context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
	cs.mu.Lock()
	fb := cs.fallback
	cs.mu.Unlock()
	if fb != nil || !m.IsRequest() {
		return nil, cs.Write(ctx, m)
	}
	body, hdr, err := cs.prepare(m)
	if err != nil {
		return nil, err
	}
	reply, err := cs.roundTrip(ctx, m.ID, m.Method, body, hdr, true)
	cs.recycle(m, body)
	return reply, err
}

func (cs *clientStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	select {
	case <-cs.closed:
		return jsonrpc.ErrClosed
	default:
	}
	cs.mu.Lock()
	fb := cs.fallback
	cs.mu.Unlock()
	if fb != nil {
		return fb.Write(ctx, m)
	}
	body, hdr, err := cs.prepare(m)
	if err != nil {
		return err
	}
	if m.IsRequest() {
		// The round trip runs on the caller's goroutine (the Conn's Call
		// is waiting for its answer anyway): no goroutine per request,
		// and the caller's context aborts the HTTP request. A request
		// that got no answer fails the Write, and with it the call.
		reply, err := cs.roundTrip(ctx, m.ID, m.Method, body, hdr, true)
		cs.recycle(m, body)
		if reply != nil {
			cs.deliver(ctx, reply)
		}
		return err
	}
	err = cs.send(ctx, body, hdr)
	cs.recycle(m, body)
	if err != nil {
		return err
	}
	if m.Method == protocol.NotificationInitialized {
		// Wait until the GET stream is established (or refused), so that
		// what the server sends on it as soon as the session is ready is
		// not lost: a server may send a request on the GET stream while
		// it serves the client's next POST, and drops it when no GET
		// stream is open yet (the TypeScript SDK does).
		if ready := cs.openGET(); ready != nil {
			t := time.NewTimer(getReadyWait)
			select {
			case <-ready:
			case <-t.C:
			case <-ctx.Done():
			case <-cs.closed:
			}
			t.Stop()
		}
	}
	return nil
}

// prepare encodes a message and the headers its POST carries beyond
// those of every POST of the stream.
func (cs *clientStream) prepare(m *jsonrpc.Message) ([]byte, postHeader, error) {
	var buf []byte
	if cs.bodyReusable(m) {
		buf = (*bodyBufs.Get().(*[]byte))[:0]
	}
	body, err := jsonrpc.AppendMessage(buf, m)
	if err != nil {
		return nil, nil, err
	}
	hdr := make(postHeader, 0, 4)
	if m.Method != "" {
		hdr = hdr.set(streamwire.HeaderMethod, m.Method)
	}
	stateless := false
	if mr, ok := m.Body.(mirrored); ok {
		mr.Mirror(func(k, v string) {
			hdr = hdr.set(k, v)
			stateless = stateless || strings.EqualFold(k, streamwire.HeaderProtocolVersion)
		})
	}
	if stateless && m.IsRequest() && hdr.get(streamwire.HeaderName) == "" {
		if field := streamwire.NameField(m.Method); field != "" {
			// The body did not say: find the name in the params.
			if params, ok, _ := jsonrpc2.Member(body, "params"); ok {
				if v, ok, _ := jsonrpc2.Member(params, field); ok && len(v) > 0 && v[0] == '"' {
					s, _ := jsonrpc2.Unquote(v)
					hdr = hdr.set(streamwire.HeaderName, mcpheader.Encode(s))
				}
			}
		}
	}
	switch {
	case m.Method == protocol.MethodInitialize:
		cs.mu.Lock()
		cs.initBody = body
		cs.mu.Unlock()
	case m.Method == protocol.NotificationInitialized:
		cs.mu.Lock()
		cs.initNote = body
		cs.mu.Unlock()
	}
	return body, hdr, nil
}

// bodyBufs recycles the bodies of POSTs made by the lean HTTP/1.1 client,
// which is done with a body once its answer has come: a large call then
// costs no large garbage on its way out.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

// bodyReusable reports whether the body of m can be recycled once sent:
// net/http may read a body after its request returned, and the
// initialize request and notification are kept to open a new session.
func (cs *clientStream) bodyReusable(m *jsonrpc.Message) bool {
	return cs.h1 != nil && m.Method != protocol.MethodInitialize && m.Method != protocol.NotificationInitialized
}

// recycle gives the body of m back once it was sent.
func (cs *clientStream) recycle(m *jsonrpc.Message, body []byte) {
	if cs.bodyReusable(m) && cap(body) <= streamwire.MaxPooledBody {
		body = body[:0]
		bodyBufs.Put(&body)
	}
}

// getReadyWait bounds the wait for the legacy GET stream's response
// headers after the initialized notification.
const getReadyWait = 2 * time.Second

// send POSTs a notification or a response, which the server accepts with
// 202 and no body.
func (cs *clientStream) send(ctx context.Context, body []byte, hdr postHeader) error {
	resp, err := cs.post(ctx, body, hdr)
	if err != nil {
		return postError("", err)
	}
	defer resp.Body.Close()
	if err := cs.unfollowed(http.MethodPost, resp); err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		return cs.statusError(http.MethodPost, resp, raw)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	return nil
}

// answeredBy returns the URL of the request that got resp: base, unless
// net/http followed a redirect.
func answeredBy(resp *http.Response, base *url.URL) *url.URL {
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL
	}
	return base
}

// unfollowed returns the error of an answer that is a redirect the
// Transport did not follow, or nil.
func (cs *clientStream) unfollowed(method string, resp *http.Response) error {
	if resp.StatusCode < 300 || resp.StatusCode >= 400 || resp.StatusCode == http.StatusNotModified {
		return nil
	}
	return redirect.Refused(method, cs.base, resp, cs.t.FollowRedirectsAcrossOrigins)
}

// errorBodyBytes bounds what is read of a refusal's body that is not a
// JSON-RPC error.
const errorBodyBytes = 4 << 10

// statusError describes a refused request to the endpoint, from the
// start of its body.
func (cs *clientStream) statusError(method string, resp *http.Response, body []byte) *httperr.StatusError {
	return &httperr.StatusError{Method: method, URL: cs.t.URL, StatusCode: resp.StatusCode, Status: resp.Status,
		Body:            bodytext.Excerpt(body, resp.Header.Get("Content-Type")),
		WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")}
}

// postError is the error of a POST that got no HTTP answer: it keeps its
// cause (errors.Is(err, syscall.ECONNREFUSED)), without net/http's
// *url.Error, whose text repeats the URL.
func postError(method string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if method == "" {
		return fmt.Errorf("streamable: POST: %w", err)
	}
	return fmt.Errorf("streamable: POST %s: %w", method, err)
}

func (cs *clientStream) post(ctx context.Context, body []byte, hdr postHeader) (*http.Response, error) {
	cs.mu.Lock()
	sid, version := cs.sessionID, cs.version
	var head []byte
	var headErr error
	if cs.h1 != nil {
		head, headErr = cs.fixedHead(sid)
	}
	cs.mu.Unlock()
	if cs.versionSet || hdr.get(streamwire.HeaderProtocolVersion) != "" {
		version = "" // the caller, or the message, says which
	}
	if cs.h1 != nil {
		if headErr != nil {
			return nil, headErr
		}
		resp, err := cs.h1.post(ctx, head, hdr, version, body)
		if err != nil || !cs.redirects.Followable(cs.base, resp) {
			return resp, err
		}
		// The lean client does not follow redirects: net/http's does,
		// under the same policy.
		resp.Body.Close()
	}
	h := cs.postHeaders(sid)
	for _, f := range hdr {
		h.Set(f.name, f.value)
	}
	if version != "" {
		h.Set(streamwire.HeaderProtocolVersion, version)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cs.t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = h
	return cs.hc.Do(req)
}

// postHeaders returns the headers every POST of the stream carries while
// its session is sid: Content-Type, Accept, the Transport's Header and the
// session.
func (cs *clientStream) postHeaders(sid string) http.Header {
	h := make(http.Header, len(cs.t.Header)+4)
	cs.addStreamHeaders(h, sid)
	h.Set("Content-Type", "application/json")
	// "The client MUST include an Accept header, listing both
	// application/json and text/event-stream."
	h.Set("Accept", "application/json, text/event-stream")
	return h
}

// fixedHead returns postHeaders(sid) written out for the lean HTTP/1.1
// client, once per session; the caller holds mu.
func (cs *clientStream) fixedHead(sid string) ([]byte, error) {
	if cs.head == nil || cs.headSID != sid {
		cs.head, cs.headErr = appendHeaderLines(nil, cs.postHeaders(sid))
		cs.headSID = sid
	}
	return cs.head, cs.headErr
}

// roundTrip POSTs a request and returns what the server answers: the
// answer, or nil when it was delivered through Read (with what came on
// the same event stream) or comes through the HTTP+SSE fallback; or an
// error when no answer came.
func (cs *clientStream) roundTrip(ctx context.Context, id jsonrpc.ID, method string, body []byte, hdr postHeader, mayRetry bool) (*jsonrpc.Message, error) {
	sid := cs.session()
	resp, err := cs.post(ctx, body, hdr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, cs.cancelled(id, ctx)
		}
		return nil, postError(method, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound && mayRetry && method != protocol.MethodInitialize && sid != "" && !cs.t.DisableReinitialize:
		// "When a client receives HTTP 404 in response to a request
		// containing an MCP-Session-Id, it MUST start a new session."
		if err := cs.reinitialize(ctx, sid); err != nil {
			return nil, fmt.Errorf("streamable: the server ended the session, and opening a new one failed: %w", err)
		}
		return cs.roundTrip(ctx, id, method, body, hdr, false)
	case resp.StatusCode >= 400:
		return cs.refused(ctx, id, method, body, resp)
	case resp.StatusCode >= 300:
		if err := cs.unfollowed(http.MethodPost, resp); err != nil {
			return nil, err
		}
	case resp.StatusCode == http.StatusAccepted:
		return nil, fmt.Errorf("streamable: the server accepted %s without answering it (202)", method)
	}
	if cs.getGaveUp.Load() && cs.getGaveUp.CompareAndSwap(true, false) {
		// The server answers again: so may its GET stream.
		cs.openGET()
	}
	if method == protocol.MethodInitialize {
		if sid := resp.Header.Get(streamwire.HeaderSessionID); sid != "" {
			cs.mu.Lock()
			cs.sessionID, cs.sessionOrigin = sid, answeredBy(resp, cs.base)
			cs.mu.Unlock()
		}
	}
	mt := resp.Header.Get("Content-Type")
	if mt != "application/json" && mt != "text/event-stream" {
		mt, _, _ = mime.ParseMediaType(mt)
	}
	if mt == "text/event-stream" {
		return nil, cs.readStream(ctx, id, method, resp.Body, "")
	}
	raw, _, err := cs.answers.Read(resp.Body, resp.ContentLength, cs.max)
	if err != nil {
		return nil, fmt.Errorf("streamable: reading the answer to %s: %w", method, err)
	}
	if len(raw) > cs.max {
		return nil, fmt.Errorf("streamable: the answer to %s exceeds %d bytes", method, cs.max)
	}
	m, err := jsonrpc.Decode(raw, jsonrpc.Limits{MaxSize: cs.max})
	if err != nil {
		// %v: the answer is broken, which is not the server's JSON-RPC
		// error.
		return nil, fmt.Errorf("streamable: invalid answer to %s: %v", method, err)
	}
	if method == protocol.MethodInitialize {
		cs.received(m)
	}
	m.Buffer = raw // for Recycle, which keeps only what the pool would
	return m, nil
}

// refused handles a request answered with an HTTP error status: a
// JSON-RPC error in the body is the answer; an initialize refused by a
// server of the HTTP+SSE transport falls back to it; anything else is a
// *httperr.StatusError.
func (cs *clientStream) refused(ctx context.Context, id jsonrpc.ID, method string, body []byte, resp *http.Response) (*jsonrpc.Message, error) {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, int64(cs.max)))
	em, perr := jsonrpc.Decode(raw, jsonrpc.Limits{MaxSize: cs.max})
	statelessBody := perr == nil && em.Error != nil && isStatelessError(em.Error.Code)
	if method == protocol.MethodInitialize && !statelessBody && !cs.t.DisableSSEFallback &&
		(resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed) {
		// "If it fails with HTTP status code 400 Bad Request, 404 Not
		// Found, or 405 Method Not Allowed and the response body is
		// not a recognized modern JSON-RPC error: Issue a GET request
		// to the server URL, expecting ... an endpoint event."
		if cs.fallBack(ctx, id, body) {
			return nil, nil
		}
	}
	if perr == nil && em.Error != nil {
		return &jsonrpc.Message{ID: id, Error: em.Error}, nil
	}
	return nil, cs.statusError(http.MethodPost, resp, raw[:min(len(raw), errorBodyBytes)])
}

// Recycle takes back the body of an answer that came as plain JSON, once
// its caller is done with it ([jsonrpc.Recycler]).
func (cs *clientStream) Recycle(m *jsonrpc.Message) {
	if b := m.Buffer; b != nil {
		m.Buffer = nil
		cs.answers.Put(b, nil)
	}
}

// defaultClient is the HTTP client of Transports that bring none. Unlike
// http.DefaultTransport, it keeps enough idle connections per host for
// the requests a client has in flight at once (a new TCP connection per
// request costs more than the request), and buffers a typical message in
// one piece.
var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:               http.ProxyFromEnvironment,
	ForceAttemptHTTP2:   true,
	MaxIdleConns:        256,
	MaxIdleConnsPerHost: 64,
	IdleConnTimeout:     90 * time.Second,
	TLSHandshakeTimeout: 10 * time.Second,
	WriteBufferSize:     64 << 10,
	ReadBufferSize:      64 << 10,
}}

// cancelled ends a call whose context ended during its round trip, and
// returns the context's cause. Closing the stream is the stateless way
// to cancel; a legacy session is told with notifications/cancelled, since
// there "disconnection SHOULD NOT be interpreted as the client cancelling
// its request".
func (cs *clientStream) cancelled(id jsonrpc.ID, ctx context.Context) error {
	cause := context.Cause(ctx)
	if !cs.hasSession() {
		return cause
	}
	note, err := jsonrpc.AppendMessage(nil, &jsonrpc.Message{Method: protocol.NotificationCancelled,
		Body: &protocol.CancelledParams{RequestID: id, Reason: cause.Error()}})
	if err != nil {
		return cause
	}
	nctx, cancel := context.WithTimeout(cs.ctx, 2*time.Second)
	defer cancel()
	cs.send(nctx, note, nil)
	return cause
}

// isStatelessError reports whether an error code identifies a stateless server
// ("a recognized modern JSON-RPC error", the
// specification's word for the stateless revisions).
func isStatelessError(code int64) bool {
	switch code {
	case protocol.CodeHeaderMismatch, protocol.CodeMissingRequiredClientCapability, protocol.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

func (cs *clientStream) hasSession() bool {
	return cs.session() != ""
}

// session returns the legacy session's id, "" when there is none.
func (cs *clientStream) session() string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.sessionID
}

// received notes what the transport needs from the answer to initialize:
// the protocol version negotiated, for the MCP-Protocol-Version header.
func (cs *clientStream) received(m *jsonrpc.Message) {
	if len(m.Result) == 0 {
		return
	}
	if v, ok, _ := jsonrpc2.Member(m.Result, "protocolVersion"); ok && len(v) > 0 && v[0] == '"' {
		if s, err := jsonrpc2.Unquote(v); err == nil && !protocol.IsStateless(s) {
			cs.mu.Lock()
			if cs.sessionID != "" || cs.version == "" {
				cs.version = s
			}
			cs.mu.Unlock()
		}
	}
}

// readStream reads an event stream answering request id, and resumes it
// with GET and Last-Event-ID when the connection breaks before the
// answer, honouring the server's retry delay (legacy sessions only: a
// stateless stream that breaks loses its request). It returns an error when
// the answer did not come.
func (cs *clientStream) readStream(ctx context.Context, id jsonrpc.ID, method string, body io.Reader, lastID string) error {
	retry := time.Second
	var backoff reconnects
	for attempt := 0; ; attempt++ {
		before := cs.delivered.Load()
		answered, last, r, err := cs.readEvents(ctx, id, method, body)
		if last != "" {
			lastID = last
		}
		if r > 0 {
			retry = r
		}
		if answered {
			return nil
		}
		if ctx.Err() != nil {
			return cs.cancelled(id, ctx)
		}
		if !id.IsValid() {
			return nil
		}
		max := cs.t.MaxReconnects
		if max <= 0 {
			max = 5
		}
		if !cs.hasSession() || lastID == "" || attempt >= max {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("streamable: the stream answering %s ended before its response: %w", method, err)
		}
		// "The client MUST respect the retry field, waiting the given
		// number of milliseconds before attempting to reconnect": within
		// bounds, and longer each time a stream ends with nothing.
		t := time.NewTimer(backoff.next(retry, cs.delivered.Load() > before))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return cs.cancelled(id, ctx)
		case <-cs.closed:
			return fmt.Errorf("streamable: the stream answering %s ended before its response: %w", method, jsonrpc.ErrClosed)
		}
		resp, gerr := cs.get(ctx, cs.session(), lastID)
		if gerr != nil {
			return cs.unresumed(ctx, id, method, lastID, gerr)
		}
		body = resp.Body
		defer resp.Body.Close()
	}
}

// unresumed is the error of a request whose stream could not be resumed
// after lastID. A server that refuses the Last-Event-ID (the events
// expired, the replica that kept them is gone, or the session ended) does
// so again when asked again: the request fails at once, and says that its
// response is lost (the request may have run).
func (cs *clientStream) unresumed(ctx context.Context, id jsonrpc.ID, method, lastID string, err error) error {
	if ctx.Err() != nil {
		return cs.cancelled(id, ctx)
	}
	var se *httperr.StatusError
	if errors.As(err, &se) && unresumable(se.StatusCode) {
		return fmt.Errorf("streamable: the server could not resume the stream answering %s after event %q (its events expired, or the session ended); the response is lost: %w", method, lastID, err)
	}
	return fmt.Errorf("streamable: resuming the stream answering %s: %w", method, err)
}

// readEvents delivers the messages of one event stream. It reports
// whether the response to id arrived, the last event id and retry delay
// seen; cs.delivered counts the messages delivered.
func (cs *clientStream) readEvents(ctx context.Context, id jsonrpc.ID, method string, body io.Reader) (answered bool, lastID string, retry time.Duration, err error) {
	rd := ssewire.NewReader(body, cs.max)
	for {
		ev, err := rd.Next()
		// Id-only events (the priming event of a resumable stream) are
		// not returned, but they count for Last-Event-ID and retry.
		lastID = rd.LastEventID()
		if r, ok := rd.Retry(); ok {
			retry = r
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return false, lastID, retry, err
		}
		if len(ev.Data) == 0 || (ev.Name != "" && ev.Name != "message") {
			continue
		}
		m, derr := jsonrpc.Decode([]byte(ev.Data), jsonrpc.Limits{MaxSize: cs.max})
		if derr != nil {
			cs.log.Warn("streamable: invalid message in event stream", "error", derr)
			continue
		}
		if method == protocol.MethodInitialize && m.IsResponse() && m.ID == id {
			cs.received(m)
		}
		if !cs.deliver(ctx, m) {
			return false, lastID, retry, ctx.Err()
		}
		cs.delivered.Add(1)
		if m.IsResponse() && m.ID == id {
			return true, lastID, retry, nil
		}
	}
}

// get opens an event stream with GET in session sid, resuming it after
// lastID unless that is "".
func (cs *clientStream) get(ctx context.Context, sid, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cs.t.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set(streamwire.HeaderLastEventID, lastID)
	}
	cs.setHeaders(req.Header, sid)
	resp, err := cs.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		if err := cs.unfollowed(http.MethodGet, resp); err != nil {
			return nil, err
		}
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		return nil, cs.statusError(http.MethodGet, resp, raw)
	}
	return resp, nil
}

// openGET starts the legacy GET stream for server-initiated messages. It
// is optional on both sides: when the server refuses it (405) or it
// breaks for good, requests go on over POST regardless. The channel it
// returns is closed once the first GET has its answer (or failed); it is
// nil when no stream was started.
func (cs *clientStream) openGET() <-chan struct{} {
	if cs.t.DisableGETStream || !cs.hasSession() {
		return nil
	}
	cs.mu.Lock()
	if cs.getOpen {
		cs.mu.Unlock()
		return nil
	}
	cs.getOpen = true
	cs.mu.Unlock()
	ready := make(chan struct{})
	var readyOnce sync.Once
	cs.wg.Add(1)
	go func() {
		defer cs.wg.Done()
		defer readyOnce.Do(func() { close(ready) })
		gaveUp := false
		defer func() {
			cs.mu.Lock()
			cs.getOpen = false
			cs.mu.Unlock()
			// Once the stream is no longer open, for openGET to open it.
			cs.getGaveUp.Store(gaveUp)
		}()
		lastID := ""
		retry := time.Second
		var backoff reconnects
		for failures := 0; failures < 5; {
			before := cs.delivered.Load()
			sid := cs.session()
			resp, err := cs.get(cs.ctx, sid, lastID)
			readyOnce.Do(func() { close(ready) })
			if err != nil {
				switch cs.refusedGET(err, sid, lastID) {
				case getStop:
					return
				case getFresh:
					lastID = "" // at once: every moment without a stream loses messages
					continue
				case getReopened:
					lastID = ""
					if failures++; failures == 1 {
						continue
					}
				default:
					failures++
				}
			} else {
				failures = 0
				_, last, r, _ := cs.readEvents(cs.ctx, jsonrpc.ID{}, "", resp.Body)
				resp.Body.Close()
				if last != "" {
					lastID = last
				}
				if r > 0 {
					retry = r
				}
			}
			// A server that ends the stream at once, with a short retry or
			// none, is reconnected to less and less often.
			t := time.NewTimer(backoff.next(retry, cs.delivered.Load() > before))
			select {
			case <-t.C:
			case <-cs.closed:
				t.Stop()
				return
			}
		}
		cs.log.Warn("streamable: the GET stream failed again and again; it is opened again after the next request the server answers")
		gaveUp = true
	}()
	return ready
}

// getNext is what the legacy GET stream does after a GET that failed.
type getNext int

const (
	getRetry    getNext = iota // the same GET again, after a delay
	getStop                    // no GET stream (any more)
	getFresh                   // a GET without Last-Event-ID, at once
	getReopened                // a GET in the new session opened meanwhile
)

// refusedGET decides what follows a failed GET of the legacy GET stream
// in session sid that resumed after lastID ("" for a fresh GET).
//
// A server refuses a Last-Event-ID it cannot resume: the events expired,
// the replica that kept them is gone, or it keeps none. The specification
// says nothing of that case, and servers answer it in several ways (ferry:
// 404 "unknown or expired event id"; the TypeScript SDK: 400 "Invalid
// event ID format"), some alike to the 404 of a session that ended. Asking
// again with the same id gets the same answer, so the stream starts
// afresh: a fresh GET tells the two apart, since it is refused with 404
// only when the session ended, and then "the client MUST start a new
// session".
func (cs *clientStream) refusedGET(err error, sid, lastID string) getNext {
	var se *httperr.StatusError
	switch {
	case cs.ctx.Err() != nil:
		return getStop
	case !errors.As(err, &se):
		return getRetry
	case se.StatusCode == http.StatusMethodNotAllowed:
		return getStop
	case lastID != "" && unresumable(se.StatusCode):
		cs.log.Warn("streamable: the server could not resume the GET stream; the messages it sent since are lost, opening a new stream",
			"lastEventId", lastID, "status", se.StatusCode, "error", se.Body)
		return getFresh
	case lastID == "" && sid != "" && se.StatusCode == http.StatusNotFound:
		return cs.sessionEnded(sid, se)
	}
	return getRetry
}

// unresumable reports whether a GET with Last-Event-ID refused with status
// means that the stream cannot be resumed from that event.
func unresumable(status int) bool {
	return status == http.StatusNotFound || status == http.StatusBadRequest || status == http.StatusGone
}

// sessionEnded handles a GET of the legacy GET stream in session sid
// refused with 404: the server ended the session. A new one is opened, as
// a POST would, unless the Transport says not to.
func (cs *clientStream) sessionEnded(sid string, se *httperr.StatusError) getNext {
	if cs.t.DisableReinitialize {
		cs.log.Warn("streamable: the server ended the session; the GET stream stops", "status", se.StatusCode, "error", se.Body)
		return getStop
	}
	if err := cs.reinitialize(cs.ctx, sid); err != nil {
		cs.log.Warn("streamable: the server ended the session, and opening a new one failed; the GET stream stops", "error", err)
		return getStop
	}
	return getReopened
}

// reinitialize opens a new legacy session in place of the session ended,
// by sending the initialize request and the initialized notification
// again. When another request or the GET stream met the end of the same
// session first, the session it opened is kept: one session ended gets
// one new session.
func (cs *clientStream) reinitialize(ctx context.Context, ended string) error {
	cs.reinit.Lock()
	defer cs.reinit.Unlock()
	cs.mu.Lock()
	if cs.sessionID != ended {
		cs.mu.Unlock()
		return nil
	}
	initBody, initNote := cs.initBody, cs.initNote
	cs.sessionID = ""
	cs.mu.Unlock()
	if initBody == nil {
		return errors.New("no initialize request to repeat")
	}
	resp, err := cs.post(ctx, initBody, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := cs.unfollowed(http.MethodPost, resp); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyBytes))
		return cs.statusError(http.MethodPost, resp, raw)
	}
	sid := resp.Header.Get(streamwire.HeaderSessionID)
	if sid == "" {
		return errors.New("initialize answered without a session id")
	}
	cs.mu.Lock()
	cs.sessionID, cs.sessionOrigin = sid, answeredBy(resp, cs.base)
	cs.mu.Unlock()
	// The answer itself is not delivered: the Conn saw the first one.
	io.Copy(io.Discard, io.LimitReader(resp.Body, int64(cs.max)))
	if initNote != nil {
		if err := cs.send(ctx, initNote, nil); err != nil {
			return err
		}
	}
	cs.log.Info("streamable: opened a new session after the server forgot the old one")
	cs.openGET()
	return nil
}

// fallBack switches to the HTTP+SSE transport of 2024-11-05 and sends the
// initialize request over it.
func (cs *clientStream) fallBack(ctx context.Context, id jsonrpc.ID, initBody []byte) bool {
	fb, err := (&sse.Transport{URL: cs.t.URL, Client: cs.hc, Header: cs.t.Header, MaxEventBytes: cs.max, Logger: cs.log}).Open(ctx)
	if err != nil {
		cs.log.Debug("streamable: HTTP+SSE fallback failed", "error", err)
		return false
	}
	m, err := jsonrpc.Decode(bytes.Clone(initBody), jsonrpc.Limits{MaxSize: cs.max})
	if err != nil {
		fb.Close()
		return false
	}
	if err := fb.Write(ctx, m); err != nil {
		fb.Close()
		return false
	}
	cs.mu.Lock()
	cs.fallback = fb
	cs.mu.Unlock()
	cs.wg.Add(1)
	go func() {
		defer cs.wg.Done()
		for {
			m, err := fb.Read()
			if err != nil {
				return
			}
			if !cs.deliver(cs.ctx, m) {
				return
			}
		}
	}()
	cs.log.Info("streamable: the server speaks the HTTP+SSE transport of 2024-11-05; using it")
	return true
}

// Bounds of the reconnection delay a server announces with an event
// stream's retry field: a server that asks for a millisecond would get
// thousands of requests a second from each client, one that asks for a
// day would lose its clients' streams for that long.
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 30 * time.Second
)

// reconnects paces the reconnections of one stream: the first after a
// stream that delivered something waits the server's retry (within
// [minRetry, maxRetry]); each following one, while streams end without
// delivering anything, waits twice as long as the one before, up to
// maxRetry, up to a quarter less at random so that many clients do not
// come back at once.
type reconnects struct{ empty int }

// next returns the delay before the next reconnection, given the
// server's retry and whether the stream that ended delivered anything.
func (r *reconnects) next(retry time.Duration, delivered bool) time.Duration {
	if delivered {
		r.empty = 0
	} else {
		r.empty++
	}
	d := min(max(retry, minRetry), maxRetry)
	if r.empty <= 1 {
		return d
	}
	for i := 1; i < r.empty && d < maxRetry; i++ {
		d *= 2
	}
	d = min(d, maxRetry)
	return d - rand.N(d/4+1)
}
