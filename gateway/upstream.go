package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
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

	mu     sync.Mutex
	own    map[owner]*link // the isolated processes, by whom they run for
	closed bool
	done   chan struct{} // closed by close
}

func newUpstream(g *Gateway, cfg *config.Server) (*upstream, error) {
	u := &upstream{g: g, name: cfg.Name, cfg: cfg, isolated: g.isolated(cfg),
		own: map[owner]*link{}, done: make(chan struct{})}
	l, err := newLink(u, cfg, nil)
	if err != nil {
		return nil, err
	}
	u.shared = l
	u.front = newFront(g, u)
	return u, nil
}

// linkFor returns the connection that serves req, whose context is ctx:
// the shared one, or for an isolated server the one of the client it is
// for, started on its first request: a legacy session's own, or, for a
// stateless request, its caller's (the identity Options.Auth gave it with
// intercept.WithCaller: a stateless client has no session, and what ties
// its requests together is its credential). A stateless request to an
// isolated server without a caller is refused: sharing a process would
// break the isolation the entry asks for.
func (u *upstream) linkFor(ctx context.Context, req *server.Request) (*link, error) {
	if !u.isolated {
		return u.shared, nil
	}
	if req.Session != nil {
		return u.ownLink(sessionOwner(req.Session), req.Session, shareKey(ctx, req))
	}
	caller := callerOf(ctx)
	if caller == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"upstream %s runs a process per client (\"isolation\": \"session\"), and this stateless request names no caller to run it for: use a legacy session (initialize), or the gateway's bearer tokens", u.name)
	}
	return u.ownLink(callerOwner(caller), nil, shareKey(ctx, req))
}

// shareKey names the client whose share of the per-client processes a
// request's process counts against: the caller Options.Auth named, else
// the client's address (IPv6 by its /64), as the transports name a client
// for their bounds.
func shareKey(ctx context.Context, req *server.Request) string {
	return intercept.ClientKey(ctx, req.RemoteAddr())
}

// listLink returns the connection whose lists req sees: linkFor's, or,
// for a stateless request to an isolated server without a caller, the
// shared process, which holds no client's state (no client calls it).
func (u *upstream) listLink(ctx context.Context, req *server.Request) (*link, error) {
	if u.isolated && req.Session == nil && callerOf(ctx) == "" {
		return u.shared, nil
	}
	return u.linkFor(ctx, req)
}

// An owner is whom an isolated server's own process runs for: a legacy
// session, or a stateless caller. A session is its own key, not a name
// made of its address: its entry keeps it alive and goes when it ends, so
// a later session cannot take the process over (Session.ID is no key, ""
// over stdio).
type owner struct {
	sess   *server.Session
	caller string
}

func sessionOwner(sess *server.Session) owner { return owner{sess: sess} }

func callerOwner(caller string) owner { return owner{caller: caller} }

// ended is closed when o's session ends; nil (never) for a caller, whose
// process stops when it idles.
func (o owner) ended() <-chan struct{} {
	if o.sess == nil {
		return nil
	}
	return o.sess.Done()
}

// ownLink returns o's connection, started on its first request; key is
// the client whose share it counts against (shareKey).
func (u *upstream) ownLink(o owner, sess *server.Session, key string) (*link, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if l := u.own[o]; l != nil {
		l.lastUse.Store(time.Now().UnixNano())
		return l, nil
	}
	if u.closed {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %s was removed", u.name)
	}
	if err := u.g.children.acquire(key); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %s: %v", u.name, err)
	}
	l, err := newLink(u, u.cfg, sess)
	if err != nil {
		u.g.children.release(key)
		return nil, err
	}
	u.own[o] = l
	u.g.wg.Go(func() { u.reap(o, l, key) })
	return l, nil
}

// reap stops an owner's process when its session ends, when its client
// is gone (goneClient), when it has been idle for too long, or when the
// upstream goes.
func (u *upstream) reap(o owner, l *link, key string) {
	opts := &u.g.opts
	t := time.NewTicker(max(min(opts.SessionIdle, opts.ClientGone)/4, 10*time.Millisecond))
	defer t.Stop()
	for waiting := true; waiting; {
		select {
		case <-o.ended():
			waiting = false
		case <-u.done:
			waiting = false
		case <-t.C:
			waiting = !u.unused(o, l)
		}
	}
	u.mu.Lock()
	if u.own[o] == l {
		delete(u.own, o)
	}
	u.mu.Unlock()
	l.close()
	u.g.children.release(key)
	u.g.log.Debug("gateway: per-client process stopped", "server", u.name)
}

// unused reports whether o's process may stop: no call in flight, and
// idle for SessionIdle, or for ClientGone when its client holds nothing
// open with the gateway (a legacy session's client that went without
// ending it: closed, crashed, or one that only opens sessions). A
// process still starting is not idle, however long npx takes to fetch
// it.
func (u *upstream) unused(o owner, l *link) bool {
	if l.active.Load() > 0 || l.status().State == host.Starting {
		return false
	}
	idle := time.Since(time.Unix(0, l.lastUse.Load()))
	if idle >= u.g.opts.SessionIdle {
		return true
	}
	return o.sess != nil && idle >= u.g.opts.ClientGone && u.g.owners.gone(o.sess.ID, u.g.opts.ClientGone)
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
	u.g.share.relay(u.name, method, "")
	u.g.changed()
	for _, f := range u.g.frontsOf(u) {
		f.srv.NotifyListChanged(method)
	}
}

// resourceUpdated tells the clients subscribed to uri.
func (u *upstream) resourceUpdated(uri string) {
	u.g.share.relay(u.name, protocol.NotificationResourceUpdated, uri)
	for _, f := range u.g.frontsOf(u) {
		f.resourceUpdated(u, uri)
	}
}

// logMessage passes a log message on to every legacy session of the
// endpoints that show the upstream, each at its own level, whose caller
// may hear it (Options.Hears).
func (u *upstream) logMessage(p *protocol.LoggingMessageParams) {
	for _, f := range u.g.frontsOf(u) {
		if !f.shows(u) {
			continue // a view that shows nothing of u (views.go)
		}
		hears := f.hearing(Notice{Method: protocol.NotificationMessage, Server: u.name})
		for _, sess := range f.srv.Sessions() {
			if hears(sess, nil) {
				sendLog(sess, p)
			}
		}
	}
}

// subscribe subscribes req's client to uri upstream.
func (u *upstream) subscribe(ctx context.Context, req *server.Request, uri string) (*link, error) {
	l, err := u.linkFor(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := l.subscribe(ctx, uri); err != nil {
		return nil, upstreamError(u.name, err)
	}
	return l, nil
}

// children bounds the per-client processes of a gateway: max in all,
// share for one client (shareKey), so that one client cannot take them
// all.
type children struct {
	max, share int
	mu         sync.Mutex
	n          int
	held       map[string]int // client -> processes
}

// acquire counts a process for client key, or says why it may not run.
func (c *children) acquire(key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= c.max {
		return fmt.Errorf("the gateway runs as many per-client processes as it may (%d); try again later", c.max)
	}
	if c.held[key] >= c.share {
		return fmt.Errorf("this client runs as many per-client processes as one client may (%d); end a session or try again later", c.share)
	}
	if c.held == nil {
		c.held = map[string]int{}
	}
	c.n++
	c.held[key]++
	return nil
}

func (c *children) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *children) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.held[key]--; c.held[key] <= 0 {
		delete(c.held, key)
	}
}
