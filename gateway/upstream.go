package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// An upstream is one server of the gateway's configuration: a shared
// connection, the connections of the client sessions that have their own
// process (isolation "session"), and its endpoint of its own
// (/servers/NAME/...).
type upstream struct {
	g        *Gateway
	name     string
	cfg      *config.Server
	isolated bool
	shared   *link
	front    *front

	mu       sync.Mutex
	sessions map[*server.Session]*link
	closed   bool
	done     chan struct{} // closed by close
}

func newUpstream(g *Gateway, cfg *config.Server) (*upstream, error) {
	u := &upstream{g: g, name: cfg.Name, cfg: cfg, isolated: g.isolated(cfg),
		sessions: map[*server.Session]*link{}, done: make(chan struct{})}
	l, err := newLink(u, cfg, nil)
	if err != nil {
		return nil, err
	}
	u.shared = l
	u.front = newFront(g, u)
	return u, nil
}

// linkFor returns the connection that serves req: the session's own for
// an isolated server's legacy session (started on its first request), the
// shared one otherwise. Stateless clients have no session, so they share
// even an isolated server's process.
func (u *upstream) linkFor(req *server.Request) (*link, error) {
	if !u.isolated || req.Session == nil {
		return u.shared, nil
	}
	sess := req.Session
	u.mu.Lock()
	defer u.mu.Unlock()
	if l := u.sessions[sess]; l != nil {
		l.lastUse.Store(time.Now().UnixNano())
		return l, nil
	}
	if u.closed {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %s was removed", u.name)
	}
	if !u.g.children.acquire() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"upstream %s: the gateway runs as many per-session processes as it may (%d); try again later", u.name, u.g.children.max)
	}
	l, err := newLink(u, u.cfg, sess)
	if err != nil {
		u.g.children.release()
		return nil, err
	}
	u.sessions[sess] = l
	u.g.wg.Go(func() { u.reap(sess, l) })
	return l, nil
}

// reap stops a session's process when the session ends, when it has been
// idle for too long, or when the upstream goes.
func (u *upstream) reap(sess *server.Session, l *link) {
	idle := u.g.opts.SessionIdle
	t := time.NewTicker(max(idle/4, 10*time.Millisecond))
	defer t.Stop()
	for waiting := true; waiting; {
		select {
		case <-sess.Done():
			waiting = false
		case <-u.done:
			waiting = false
		case <-t.C:
			// A process still starting is not idle, however long npx
			// takes to fetch it.
			last := time.Unix(0, l.lastUse.Load())
			waiting = l.active.Load() > 0 || time.Since(last) < idle || l.status().State == host.Starting
		}
	}
	u.mu.Lock()
	if u.sessions[sess] == l {
		delete(u.sessions, sess)
	}
	u.mu.Unlock()
	l.close()
	u.g.children.release()
	u.g.log.Debug("gateway: session process stopped", "server", u.name, "session", sess.ID)
}

// close stops every connection of the upstream and its endpoint.
func (u *upstream) close() {
	u.mu.Lock()
	if u.closed {
		u.mu.Unlock()
		return
	}
	u.closed = true
	close(u.done)
	u.mu.Unlock()
	u.front.close()
	u.shared.close()
}

// listChanged tells the clients of every endpoint that shows the upstream.
func (u *upstream) listChanged(method string) {
	u.g.changed()
	for _, f := range u.g.frontsOf(u) {
		f.srv.NotifyListChanged(method)
	}
}

// resourceUpdated tells the clients subscribed to uri.
func (u *upstream) resourceUpdated(uri string) {
	for _, f := range u.g.frontsOf(u) {
		f.srv.ResourceUpdated(context.Background(), uri)
	}
}

// logMessage passes a log message on to every legacy session of the
// endpoints that show the upstream, each at its own level.
func (u *upstream) logMessage(p *protocol.LoggingMessageParams) {
	for _, f := range u.g.frontsOf(u) {
		for _, sess := range f.srv.Sessions() {
			sendLog(sess, p)
		}
	}
}

// subscribe subscribes req's client to uri upstream.
func (u *upstream) subscribe(ctx context.Context, req *server.Request, uri string) (*link, error) {
	l, err := u.linkFor(req)
	if err != nil {
		return nil, err
	}
	if err := l.subscribe(ctx, uri); err != nil {
		return nil, upstreamError(u.name, err)
	}
	return l, nil
}

// children bounds the per-session processes of a gateway.
type children struct {
	max int
	mu  sync.Mutex
	n   int
}

func (c *children) acquire() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return false
	}
	c.n++
	return true
}

func (c *children) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *children) release() {
	c.mu.Lock()
	c.n--
	c.mu.Unlock()
}
