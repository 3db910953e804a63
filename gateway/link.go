package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// A link is one connection to an upstream server: the process of a stdio
// server, shared by every client or kept for one client session, or a
// connection to a remote server. It runs under a host.Host of its own,
// which starts it, and restarts it when it dies.
type link struct {
	up   *upstream
	host *host.Host
	srv  *host.Server
	// sess is the client session the link belongs to; nil when it is
	// shared by every client.
	sess *server.Session

	lastUse atomic.Int64 // unix nanoseconds of the last call's end
	active  atomic.Int32 // calls in flight

	mu      sync.Mutex
	gate    gate // the calls in flight, and whom a question is for (gate.go)
	lists   lists
	subs    map[string]*subscription // resource URI -> upstream subscription
	watched *client.Client           // the client whose list changes are watched
}

// newLink starts a connection to cfg; sess is the client session it is
// for, or nil for a shared one.
func newLink(up *upstream, cfg *config.Server, sess *server.Session) (*link, error) {
	l := &link{up: up, sess: sess, subs: map[string]*subscription{}}
	g := up.g
	opts := g.hostOptions()
	opts.Client = l.clientOptions
	h, err := host.New([]*config.Server{cfg}, opts)
	if err != nil {
		return nil, err
	}
	l.host = h
	l.srv, _ = h.Server(cfg.Name)
	l.lastUse.Store(time.Now().UnixNano())
	// Start launches the server and then waits for it: with a context
	// that is already done, it launches it and returns, and the server
	// starts (and restarts) on its own.
	launched, cancel := context.WithCancel(context.Background())
	cancel()
	h.Start(launched)
	return l, nil
}

// close stops the connection and waits for the process to exit.
func (l *link) close() { l.host.Close() }

// use marks the link busy until the function it returns is called: a
// session's process is not idle while a request waits for it to start.
func (l *link) use() func() {
	l.active.Add(1)
	return func() {
		l.lastUse.Store(time.Now().UnixNano())
		l.active.Add(-1)
	}
}

// client returns the connection's client, waiting while it starts, and
// while it is down for a restart due within Options.RestartWait.
func (l *link) client(ctx context.Context) (*client.Client, error) {
	c, err := l.srv.Client(ctx)
	if err != nil && l.restartDue() {
		c, err = l.awaitRestart(ctx)
	}
	if err != nil {
		return nil, upstreamError(l.up.name, err)
	}
	l.watch(c)
	return c, nil
}

// restartDue reports whether the server is down and will be started
// again within RestartWait.
func (l *link) restartDue() bool {
	st := l.status()
	return st.State == host.Down && time.Until(st.RetryAt) <= l.up.g.opts.RestartWait
}

// awaitRestart waits, within RestartWait and ctx, for the server to be
// started again, and returns its client: a crash (a tool that made the
// server exit, say) fails the calls in flight, not those that come while
// it restarts.
func (l *link) awaitRestart(ctx context.Context) (*client.Client, error) {
	wait, cancel := context.WithTimeout(ctx, l.up.g.opts.RestartWait)
	defer cancel()
	// Start waits until the server is ready or given up, through its
	// restart; it starts nothing that is running already.
	l.host.Start(wait, l.srv.Name())
	return l.srv.Client(ctx)
}

// resend runs run on c, the link's client, and once more on the client
// of the restarted server when its request never left
// (jsonrpc.ErrNotSent): the server had exited an instant before, and c
// was handed out before its end was noticed. A request that may have
// reached the server is not sent again: a tool call may not be safe to
// repeat.
func resend[T any](ctx context.Context, l *link, c *client.Client, run func(context.Context, *client.Client) (T, error)) (T, error) {
	res, err := run(ctx, c)
	if !errors.Is(err, jsonrpc.ErrNotSent) {
		return res, err
	}
	next, err := l.successor(ctx, c, err)
	if err != nil {
		return res, err
	}
	return run(ctx, next)
}

// successor returns the client that replaces c once c's connection has
// ended (its end is recorded a moment after a call learns of it), within
// RestartWait and ctx; l.client then waits for the restart. A connection
// that does not end meanwhile leaves unsent, the error of the request
// that was not sent on it.
func (l *link) successor(ctx context.Context, c *client.Client, unsent error) (*client.Client, error) {
	wait, cancel := context.WithTimeout(ctx, l.up.g.opts.RestartWait)
	defer cancel()
	select {
	case <-c.Done():
	case <-wait.Done():
		return nil, unsent
	}
	return l.client(ctx)
}

// clientOptions are the options of the link's client: the questions of
// the server routed to the client whose request caused them, and what the
// server announces passed on.
func (l *link) clientOptions(string) *client.Options {
	g := l.up.g
	o := &client.Options{
		Info:     g.impl,
		LogLevel: protocol.LevelDebug, // each client's own level filters
		Sampling: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return askTyped[protocol.CreateMessageResult](l, ctx, protocol.MethodCreateMessage, p)
		},
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return askTyped[protocol.ElicitResult](l, ctx, protocol.MethodElicit, p)
		},
		ElicitationModes: []string{protocol.ElicitForm, protocol.ElicitURL},
		Roots: func(ctx context.Context) ([]protocol.Root, error) {
			res, err := askTyped[protocol.ListRootsResult](l, ctx, protocol.MethodListRoots, &protocol.RequestParams{})
			if err != nil {
				return nil, err
			}
			return res.Roots, nil
		},
		OnListChanged:     l.listChanged,
		OnResourceUpdated: l.resourceUpdated,
		OnLog:             l.logMessage,
		Logger:            g.log,
	}
	if adjust := g.opts.ClientOptions; adjust != nil {
		adjust(l.up.name, o)
	}
	return o
}

// askTyped puts a server's question to the client whose request caused
// it, and decodes the answer.
func askTyped[T any](l *link, ctx context.Context, method string, params any) (*T, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	answer, err := l.ask(ctx, method, raw)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(answer, out); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "invalid %s answer from the client: %v", method, err)
	}
	return out, nil
}

// upstreamError makes a failure to reach an upstream server a JSON-RPC
// error for the client, naming the server and saying why (and when it
// restarts); errors the server answered pass as they are.
func upstreamError(name string, err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	// What the server wrote on stderr stays in the gateway's log: it may
	// hold what a remote client must not see.
	msg := err.Error()
	var exit *stdio.ExitError
	if errors.As(err, &exit) {
		msg = "the server process closed its stdout"
		if exit.Status != "" {
			msg = "the server process exited (" + exit.Status + ")"
		}
	} else if he := (*host.Error)(nil); errors.As(err, &he) {
		msg = he.Err.Error()
	}
	if he := (*host.Error)(nil); errors.As(err, &he) && !he.RetryAt.IsZero() {
		msg += fmt.Sprintf(" (restarting in %v)", time.Until(he.RetryAt).Round(time.Millisecond))
	}
	return jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream server %q: %s", name, msg)
}

// status returns the host's view of the connection.
func (l *link) status() host.Status { return l.srv.Status() }

// subscription is one resource subscription with the upstream server,
// shared by the clients that asked for it.
type subscription struct {
	refs   int
	client *client.Client
	cancel func(context.Context) error
}

// subscribe subscribes to uri upstream, once for every client that asks.
func (l *link) subscribe(ctx context.Context, uri string) error {
	c, err := l.client(ctx)
	if err != nil {
		return err
	}
	l.mu.Lock()
	s := l.subs[uri]
	if s != nil && s.client == c {
		s.refs++
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	cancel, err := c.Subscribe(ctx, uri)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.subs[uri]; old != nil && old.client == c {
		old.refs++
		go unsubscribe(cancel)
		return nil
	} else if old != nil {
		// The server restarted since: the new subscription replaces it.
		s = &subscription{refs: old.refs + 1, client: c, cancel: cancel}
	} else {
		s = &subscription{refs: 1, client: c, cancel: cancel}
	}
	l.subs[uri] = s
	return nil
}

// unsubscribe drops one client's interest in uri, and the subscription
// upstream with the last.
func (l *link) unsubscribe(uri string) {
	l.mu.Lock()
	s := l.subs[uri]
	if s == nil {
		l.mu.Unlock()
		return
	}
	s.refs--
	if s.refs > 0 {
		l.mu.Unlock()
		return
	}
	delete(l.subs, uri)
	l.mu.Unlock()
	go unsubscribe(s.cancel)
}

// unsubscribe ends an upstream subscription, bounded in time.
func unsubscribe(cancel func(context.Context) error) {
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	cancel(ctx)
}

// watch opens, for a stateless server, the subscriptions/listen stream
// that carries its list changes (legacy servers send them on their own),
// once per connection.
func (l *link) watch(c *client.Client) {
	if !c.Stateless() {
		return
	}
	l.mu.Lock()
	if l.watched == c {
		l.mu.Unlock()
		return
	}
	l.watched = c
	l.mu.Unlock()
	caps := c.ServerCapabilities()
	var f protocol.SubscriptionFilter
	f.ToolsListChanged = caps.Tools != nil && caps.Tools.ListChanged
	f.PromptsListChanged = caps.Prompts != nil && caps.Prompts.ListChanged
	f.ResourcesListChanged = caps.Resources != nil && caps.Resources.ListChanged
	if !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.Listen(ctx, f); err != nil {
			l.up.g.log.Warn("gateway: subscriptions/listen failed", "server", l.up.name, "error", err)
		}
	}()
}

// listChanged passes on a list change of the server.
func (l *link) listChanged(method string) {
	l.mu.Lock()
	l.lists.invalidate(method)
	l.mu.Unlock()
	if l.sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		l.sess.Notify(ctx, method, nil)
		cancel()
		return
	}
	l.up.listChanged(method)
}

// resourceUpdated passes on an update of a subscribed resource.
func (l *link) resourceUpdated(uri string) {
	if l.sess != nil {
		ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
		l.sess.Notify(ctx, protocol.NotificationResourceUpdated, &protocol.ResourceUpdatedParams{URI: uri})
		cancel()
		return
	}
	l.up.resourceUpdated(uri)
}

// logMessage passes on a log message of the server to the sessions that
// use the link, each at its own log level.
func (l *link) logMessage(p *protocol.LoggingMessageParams) {
	if l.sess != nil {
		sendLog(l.sess, p)
		return
	}
	if l.up.isolated {
		return // the shared process of an isolated server serves stateless clients only
	}
	l.up.logMessage(p)
}

// notifyTimeout bounds how long a notification may wait on a slow client.
const notifyTimeout = 5 * time.Second

// sendLog sends a log message to a session if its level lets it through.
func sendLog(sess *server.Session, p *protocol.LoggingMessageParams) {
	if min := sess.LogLevel(); min != "" && p.Level.Rank() < min.Rank() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	sess.Notify(ctx, protocol.NotificationMessage, p)
	cancel()
}
