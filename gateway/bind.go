package gateway

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/transport/httpserver"
)

// callerOf returns the ID of the caller Options.Auth named with
// intercept.WithCaller, "" for none.
func callerOf(ctx context.Context) string {
	if c, ok := intercept.CallerFrom(ctx); ok {
		return c.ID
	}
	return ""
}

// withCallerID returns ctx naming a caller known by its ID alone (that of
// a session another replica opened), ctx itself for "".
func withCallerID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return intercept.WithCaller(ctx, &intercept.Caller{ID: id})
}

// sessionHeader names a Streamable HTTP session.
const sessionHeader = "Mcp-Session-Id"

// owners keeps, for each Streamable HTTP and HTTP+SSE session of the
// gateway, the caller that opened it and whether its client is still
// there. Entries of sessions that ended are dropped as the map grows
// (prune), so it holds about as many as there are live sessions.
type owners struct {
	mu     sync.RWMutex
	m      map[string]*seen // session id -> what is known of it
	pruned int              // size after the last prune
	live   func() map[string]bool
}

// seen is what the gateway knows of one session's client.
type seen struct {
	caller string // who opened it ("" without Auth)
	// who is that caller as its latest request named it (its roles,
	// scopes and claims, which a new token may change), for what the
	// session's client may hear (hears.go); nil without Auth.
	who  atomic.Pointer[intercept.Caller]
	open atomic.Int32 // its HTTP requests being served, a GET stream among them
	last atomic.Int64 // when one last began or ended (Unix ns)
}

func (s *seen) begin() {
	s.open.Add(1)
	s.last.Store(time.Now().UnixNano())
}

func (s *seen) end() {
	s.last.Store(time.Now().UnixNano())
	s.open.Add(-1)
}

func (o *owners) owner(id string) (*seen, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	s, ok := o.m[id]
	return s, ok
}

// gone reports whether the client of session id holds no request open
// with the gateway and has sent none for bound: a session's client that
// holds a GET stream, as clients commonly do, is never gone. A session
// the gateway did not see open over HTTP (stdio, WebSocket) is not: it
// ends with its connection.
func (o *owners) gone(id string, bound time.Duration) bool {
	s, ok := o.owner(id)
	if !ok || s.open.Load() > 0 {
		return false
	}
	return time.Since(time.Unix(0, s.last.Load())) >= bound
}

// bind records the session id, opened by caller, and returns its entry.
func (o *owners) bind(id, caller string) *seen {
	s := &seen{caller: caller}
	s.last.Store(time.Now().UnixNano())
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]*seen{}
	}
	o.m[id] = s
	if len(o.m) > 2*o.pruned+64 {
		live := o.live()
		for k := range o.m {
			if !live[k] {
				delete(o.m, k)
			}
		}
		o.pruned = len(o.m)
	}
	return s
}

// bindSessions guards the endpoints: a request naming a session another
// caller opened (Mcp-Session-Id, or an HTTP+SSE POST's sessionId) gets
// 404, the answer for an unknown session, so that it learns nothing about
// it; a response that opens a session binds it to the request's caller.
// It notes too when each session's client has a request open, for
// ClientGone.
func (g *Gateway) bindSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := callerOf(r.Context())
		// Whatever Auth named the caller (BearerTokens, or middleware of
		// the user's own that only calls intercept.WithCaller), its
		// connections count against its share of the listener, not its
		// address's.
		if caller != "" && !httpserver.Authenticated(r.Context(), caller) {
			refuse(w, "too many connections for this caller", http.StatusTooManyRequests)
			return
		}
		id := r.Header.Get(sessionHeader)
		if id == "" && r.URL.RawQuery != "" {
			id = r.URL.Query().Get("sessionId") // an HTTP+SSE session's POST
		}
		if id == "" {
			sse := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sse")
			b := &binding{ResponseWriter: w, g: g, caller: caller, sse: sse, ctx: r.Context()}
			next.ServeHTTP(b, r)
			if b.seen != nil {
				b.seen.end()
			}
			return
		}
		s, ok := g.owners.owner(id)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if caller != "" && s.caller != "" && s.caller != caller {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		s.saw(r.Context())
		s.begin()
		defer s.end()
		next.ServeHTTP(w, r)
	})
}

// sseSession finds the session id in the endpoint event that begins an
// HTTP+SSE session's stream ("data: /message?sessionId=ID").
func sseSession(p []byte) string {
	_, rest, ok := bytes.Cut(p, []byte("sessionId="))
	if !ok {
		return ""
	}
	if i := bytes.IndexAny(rest, "&\r\n \""); i >= 0 {
		rest = rest[:i]
	}
	return string(rest)
}

// binding is the ResponseWriter of a request without a session: when its
// response opens one (an initialize's answer carries its id), the session
// is bound to the caller before the client can learn the id, and counts
// the request as its client's until it ends.
type binding struct {
	http.ResponseWriter
	g      *Gateway
	caller string
	ctx    context.Context // the request's, which names its caller
	done   bool
	// sse is set for the GET that opens an HTTP+SSE session, whose id
	// comes in the stream's first event.
	sse  bool
	seen *seen // the session it opened
}

func (b *binding) WriteHeader(code int) {
	if !b.done {
		b.done = true
		if id := b.Header().Get(sessionHeader); id != "" {
			b.open(id)
		}
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *binding) Write(p []byte) (int, error) {
	if !b.done {
		b.WriteHeader(http.StatusOK)
	}
	if b.sse {
		b.sse = false
		if id := sseSession(p); id != "" {
			b.open(id)
		}
	}
	return b.ResponseWriter.Write(p)
}

// open binds session id to the caller, the request its client's.
func (b *binding) open(id string) {
	b.seen = b.g.owners.bind(id, b.caller)
	b.seen.saw(b.ctx)
	b.seen.begin()
}

// Flush and Unwrap keep what the handler finds through the writer
// (http.Flusher, http.ResponseController) as it was.
func (b *binding) Flush() {
	if !b.done {
		b.WriteHeader(http.StatusOK)
	}
	http.NewResponseController(b.ResponseWriter).Flush()
}

func (b *binding) Unwrap() http.ResponseWriter { return b.ResponseWriter }

// liveSessions returns the ids of the sessions open on every endpoint.
func (g *Gateway) liveSessions() map[string]bool {
	out := map[string]bool{}
	fronts := []*front{g.agg}
	for _, u := range g.upstreamList() {
		fronts = append(fronts, u.front)
	}
	fronts = append(fronts, g.viewFrontList()...)
	for _, f := range fronts {
		for _, sess := range f.srv.Sessions() {
			out[sess.ID] = true
		}
	}
	return out
}
