package server

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/protocol"
)

// Session is a legacy (initialize-based) session: one stdio process, one
// in-memory pipe, or one Mcp-Session-Id over HTTP. Stateless requests have no
// session.
type Session struct {
	server *Server
	peer   serverapi.Peer
	conn   *jsonrpc2.Conn // the connection that carries it
	// ID is the transport's session id (the Mcp-Session-Id on HTTP), or "".
	ID string
	// owner names the session as the owner of its tasks: random, so that
	// a later session never takes it over (as one allocated at the same
	// address took over a name made of the pointer).
	owner string

	done      chan struct{} // closed by Close
	closeOnce sync.Once

	// hs is what initialize settled, nil before: every request reads it,
	// so it is an immutable value behind an atomic pointer rather than
	// fields under mu, which all of a stdio connection's requests in
	// flight contended for.
	hs atomic.Pointer[handshake]

	mu       sync.Mutex
	ready    bool // notifications/initialized received
	logLevel protocol.LoggingLevel
	subs     map[string]struct{}
	ended    bool                 // Close ran: subs are released and stay empty
	tools    registry[*toolEntry] // the session's own (Session.AddTool)
	hasTools atomic.Bool          // set with the first of them
}

// newSession registers a legacy session whose server-to-client messages go
// to peer. Transports call it once per connection or HTTP session, and
// [Session.Close] when it ends.
func (s *Server) newSession(peer serverapi.Peer, id string) *Session {
	sess := &Session{server: s, peer: peer, ID: id, owner: sessionOwnerPrefix + randomID(), done: make(chan struct{})}
	s.mu.Lock()
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()
	return sess
}

// Close ends the session: it closes its connection, which stops serving
// it. [Session.Done] is closed once the session is unregistered and what
// its subscriptions kept is back in the server's budget.
func (sess *Session) Close() error {
	return sess.conn.Close()
}

// Wait blocks until the session's connection has ended and every handler
// of its requests returned, and returns why it ended: an error wrapping
// [jsonrpc.ErrClosed] and its cause (io.EOF when the client closed its
// side).
func (sess *Session) Wait() error { return sess.conn.Wait() }

// end unregisters the session, once its connection closed, and gives what
// its subscriptions kept back to the server's budget.
func (sess *Session) end() {
	sess.server.mu.Lock()
	delete(sess.server.sessions, sess)
	sess.server.mu.Unlock()
	sess.closeOnce.Do(func() { close(sess.done) })
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for uri := range sess.subs {
		sess.server.releaseSubscriptions(subscriptionBytes(uri))
	}
	sess.subs, sess.ended = nil, true
}

// Done is closed when the session has ended, so that what a program keeps
// for a session (a gateway's child process, say) can go with it.
func (sess *Session) Done() <-chan struct{} { return sess.done }

// Sessions returns the legacy sessions that completed initialize and have
// not ended, for servers that send their clients messages of their own
// (a gateway passing on an upstream server's log messages).
func (s *Server) Sessions() []*Session {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		if sess.isReady() {
			out = append(out, sess)
		}
	}
	return out
}

// handshake is what a session's initialize settled; never modified.
type handshake struct {
	version    string
	clientInfo protocol.Implementation
	clientCaps protocol.ClientCapabilities
}

// noHandshake is a session's before initialize.
var noHandshake handshake

// handshake returns what initialize settled, or zero values before it.
func (sess *Session) handshake() *handshake {
	if hs := sess.hs.Load(); hs != nil {
		return hs
	}
	return &noHandshake
}

// Initialized reports whether the session completed initialize.
func (sess *Session) Initialized() bool { return sess.hs.Load() != nil }

// ProtocolVersion returns the negotiated revision ("" before initialize).
func (sess *Session) ProtocolVersion() string { return sess.handshake().version }

// ClientInfo returns the client's name and version from initialize.
func (sess *Session) ClientInfo() protocol.Implementation { return sess.handshake().clientInfo }

// ClientCapabilities returns what the client declared in initialize.
func (sess *Session) ClientCapabilities() protocol.ClientCapabilities {
	return sess.handshake().clientCaps
}

// LogLevel returns the level set by logging/setLevel, or "" if none was.
func (sess *Session) LogLevel() protocol.LoggingLevel {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.logLevel
}

// Notify sends a notification to the session's client.
func (sess *Session) Notify(ctx context.Context, method string, params any) error {
	return sess.peer.Notify(ctx, method, params)
}

func (sess *Session) subscribed(uri string) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	_, ok := sess.subs[uri]
	return ok
}

func (sess *Session) isReady() bool { return sess.Initialized() }

// initialize answers the legacy handshake.
func (s *Server) initialize(sess *Session, p *protocol.InitializeParams) *protocol.InitializeResult {
	v := s.negotiate(p.ProtocolVersion)
	sess.hs.Store(&handshake{version: v, clientInfo: p.ClientInfo, clientCaps: p.Capabilities})
	return &protocol.InitializeResult{
		ProtocolVersion: v,
		Capabilities:    s.capabilitiesFor(v),
		ServerInfo:      s.implFor(v),
		Instructions:    s.opts.Instructions,
	}
}

// capabilitiesFor trims the capabilities to what revision v defines.
func (s *Server) capabilitiesFor(v string) protocol.ServerCapabilities {
	c := s.capabilities()
	if !protocol.AtLeast(v, protocol.Version20250326) {
		c.Completions = nil // the completions capability came with 2025-03-26
	}
	if !protocol.AtLeast(v, protocol.Version20251125) || protocol.IsStateless(v) {
		c.Tasks = nil
	}
	if !protocol.IsStateless(v) && c.Extensions[protocol.ExtensionTasks] != nil {
		// A legacy session has the tasks capability instead; other
		// extensions (skills) are declared in both eras, as clients of
		// 2025-11-25 read capabilities.extensions too.
		c.Extensions = mergeExtensions(c.Extensions, nil)
		delete(c.Extensions, protocol.ExtensionTasks)
	}
	s.taskCapabilities(&c, v)
	return c
}

// implFor trims the server's Implementation to what revision v defines.
func (s *Server) implFor(v string) protocol.Implementation {
	impl := s.impl
	if !protocol.AtLeast(v, protocol.Version20250618) {
		impl.Title = ""
	}
	if !protocol.AtLeast(v, protocol.Version20251125) {
		impl.Icons, impl.WebsiteURL, impl.Description = nil, "", ""
	}
	return impl
}
