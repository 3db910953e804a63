package server

import (
	"context"

	"github.com/ferrymcp/ferry/protocol"
)

// A session's own tools: visible to one legacy session only, beside the
// server's (and in their place, for a name both have). They are what a
// server offers a client according to who it is or what it did in the
// session: tools unlocked by a login tool, say, or registered in
// Options.InitializedHandler from the client's identity.
//
// A stateless request belongs to no session, even when it comes over a
// connection that also carries one: it sees the server's tools only.
// The stateless way to give callers tools of their own is to serve them
// from a Server per caller (the HTTP handler's server chosen per
// request), or to filter tools/list and refuse tools/call in a
// [Middleware] keyed by the caller's identity (see [Request.Header]).
//
// A server whose tools are all per session declares the tools capability
// itself ([Options].Capabilities): the capabilities are settled at
// initialize, before the session has tools.

// AddTool adds (or replaces) a tool that only this session sees, with a
// raw handler; see [Server.AddTool], whose checks (and panics) it shares.
// The session's client is told its tool list changed.
func (sess *Session) AddTool(t *protocol.Tool, h ToolHandler) {
	sess.putTool(sess.server.rawTool(t, h))
}

// AddSessionTool is [AddTool] for a tool that only sess sees (see
// [Session.AddTool]).
func AddSessionTool[In, Out any](sess *Session, t *protocol.Tool, h TypedToolHandler[In, Out]) {
	sess.putTool(typedTool(sess.server, t, h))
}

// RemoveTools removes tools the session added, by name.
func (sess *Session) RemoveTools(names ...string) {
	sess.mu.Lock()
	removed := sess.tools.remove(names...)
	sess.mu.Unlock()
	if removed {
		sess.toolsChanged()
	}
}

func (sess *Session) putTool(e *toolEntry) {
	e.headers = toolHeaderParams(e)
	sess.mu.Lock()
	sess.tools.put(e.tool.Name, e)
	sess.mu.Unlock()
	sess.hasTools.Store(true)
	sess.toolsChanged()
}

// toolsChanged tells the session's client, once it initialized, that its
// tool list changed.
func (sess *Session) toolsChanged() {
	if !sess.isReady() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	sess.peer.Notify(ctx, protocol.NotificationToolsListChanged, nil)
}

// sessionWithTools returns the session of a legacy request when it has
// tools of its own, else nil.
func (r *Request) sessionWithTools() *Session {
	if sess := r.Session; sess != nil && !r.stateless && sess.hasTools.Load() {
		return sess
	}
	return nil
}

// lookupTool finds the tool a request calls: the session's, then the
// server's.
func (s *Server) lookupTool(r *Request, name string) (*toolEntry, bool) {
	if sess := r.sessionWithTools(); sess != nil {
		sess.mu.Lock()
		e, ok := sess.tools.get(name)
		sess.mu.Unlock()
		if ok {
			return e, true
		}
	}
	s.mu.RLock()
	e, ok := s.tools.get(name)
	s.mu.RUnlock()
	return e, ok
}

// toolPage is a page of the server's tools and the session's together.
func (sess *Session) toolPage(cursor string, size int) ([]*toolEntry, string, error) {
	var all registry[*toolEntry]
	s := sess.server
	s.mu.RLock()
	for _, e := range s.tools.items {
		all.put(e.tool.Name, e)
	}
	s.mu.RUnlock()
	sess.mu.Lock()
	for _, e := range sess.tools.items {
		all.put(e.tool.Name, e)
	}
	sess.mu.Unlock()
	return all.page(cursor, size)
}
