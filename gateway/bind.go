package gateway

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
)

// callerKey carries the identity of a request's caller (WithCaller).
type callerKey struct{}

// WithCaller returns a context that names the caller of an HTTP request:
// middleware given as [Options].Auth calls it with an identity of its
// own choosing (a user, a client id; [BearerTokens] uses a digest of the
// token). The gateway binds each legacy session to the caller that opened
// it: a request with a session's id and another caller's credentials is
// refused, as if the session did not exist ("Servers SHOULD bind session
// IDs to user-specific information"). Without an identity, sessions are
// bound to nothing.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// callerOf returns the caller WithCaller put in ctx.
func callerOf(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}

// sessionHeader names a Streamable HTTP session.
const sessionHeader = "Mcp-Session-Id"

// owners binds the Streamable HTTP sessions of the gateway to their
// callers. Entries of sessions that ended are dropped as the map grows
// (prune), so it holds about as many as there are live sessions.
type owners struct {
	mu     sync.Mutex
	m      map[string]string // session id -> caller
	pruned int               // size after the last prune
	live   func() map[string]bool
}

func (o *owners) owner(id string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	c, ok := o.m[id]
	return c, ok
}

func (o *owners) bind(id, caller string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]string{}
	}
	o.m[id] = caller
	if len(o.m) > 2*o.pruned+64 {
		live := o.live()
		for k := range o.m {
			if !live[k] {
				delete(o.m, k)
			}
		}
		o.pruned = len(o.m)
	}
}

// bindSessions guards the endpoints: a request naming a session another
// caller opened (Mcp-Session-Id, or an HTTP+SSE POST's sessionId) gets
// 404, the answer for an unknown session, so that it learns nothing about
// it; a response that opens a session binds it to the request's caller.
func (g *Gateway) bindSessions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := callerOf(r.Context())
		if caller == "" {
			next.ServeHTTP(w, r)
			return
		}
		id := r.Header.Get(sessionHeader)
		if id == "" && r.URL.RawQuery != "" {
			id = r.URL.Query().Get("sessionId") // an HTTP+SSE session's POST
		}
		if id != "" {
			if owner, ok := g.owners.owner(id); ok && owner != caller {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		sse := r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/sse")
		next.ServeHTTP(&binding{ResponseWriter: w, g: g, caller: caller, sse: sse}, r)
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
// is bound to the caller before the client can learn the id.
type binding struct {
	http.ResponseWriter
	g      *Gateway
	caller string
	done   bool
	// sse is set for the GET that opens an HTTP+SSE session, whose id
	// comes in the stream's first event.
	sse bool
}

func (b *binding) WriteHeader(code int) {
	if !b.done {
		b.done = true
		if id := b.Header().Get(sessionHeader); id != "" {
			b.g.owners.bind(id, b.caller)
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
			b.g.owners.bind(id, b.caller)
		}
	}
	return b.ResponseWriter.Write(p)
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
	for _, f := range fronts {
		for _, sess := range f.srv.Sessions() {
			out[sess.ID] = true
		}
	}
	return out
}
