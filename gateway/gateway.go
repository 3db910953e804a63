// Package gateway puts MCP servers behind one HTTP address: the servers
// of a configuration file (stdio programs it runs, remote servers it
// reaches) served to clients of both protocol eras, aggregated on one
// endpoint and one by one on endpoints of their own.
//
// On its HTTP handler ([Gateway.ServeHTTP]):
//
//   - /mcp: every server aggregated, over Streamable HTTP (legacy sessions
//     and stateless requests on one endpoint); tools and prompts named as
//     the host package names them (server__tool), resources and templates
//     routed to the server that owns them, completion by its reference;
//   - /servers/NAME/mcp: one server, its names unchanged;
//   - /views/NAME/mcp: a view ([Options].Views, package gateway/view):
//     the tools, prompts and resources it names, as it names them, with
//     its fixed arguments set and hidden; the rest as on /mcp;
//   - /sse, /servers/NAME/sse and /views/NAME/sse: the HTTP+SSE
//     transport of 2024-11-05;
//   - /healthz (alive), /readyz (every server connected), /metrics (when
//     [Options.Metrics] is set).
//
// Everything passes through both ways in both eras: progress,
// cancellation, log messages (at each client's level), list changes (to
// every client), resource subscriptions, and the servers' questions to
// their clients (sampling, elicitation, roots), which go to the client
// whose request caused them: as a request on a legacy session, as an
// input_required result for a stateless client, whose retry resumes the
// call. A stateless client can use a legacy server and the other way
// round: each side is spoken to in its own era.
//
// A stdio server runs as one process shared by every client (request ids
// are the gateway's own, so answers cannot cross), or, with "isolation":
// "session" in its entry, one process per client: per legacy session,
// stopped when the session ends, idles, or its client is gone (holds no
// GET stream and sends nothing, see [Options.ClientGone]), and per
// caller for stateless clients (the identity [Options.Auth] names with
// intercept.WithCaller, such as the digest of a bearer token), stopped
// when it idles. A stateless request to such a server without a caller is
// refused: with nothing to tell its client from another's, it has no
// process of its own. One client (its caller, else its address) holds
// at most its share of these processes ([Options.MaxClientProcesses]).
// A process that dies fails every request in flight at once and is
// restarted, at once after a healthy run; requests that come meanwhile
// wait for it ([Options.RestartWait]).
//
// A legacy server's question over a shared process names no request: the
// gateway puts it to the one client with requests in flight there, and
// refuses it (the server gets an error) when several clients have. Calls
// that may ask (a capable client's, of a kind not seen to complete
// without asking) therefore go to such a process with no other client's
// call in flight beside them; while one's question waits for its client,
// other clients' calls that do not ask go on, and those that may ask wait
// at most seconds, then fail with an error saying why.
//
// Tasks, in both eras (2025-11-25's task-augmented tools/call, tasks/get,
// tasks/result, tasks/list, tasks/cancel and status notifications; the
// stateless era's tasks extension), are the gateway's own: it runs the
// call upstream in the background, as a task there when the server takes
// it as one, and answers for the task from its record, under an id of its
// own bound to the caller that made it. Replicas that share a Redis share
// the records, so that any replica answers for any task (see
// [TaskOptions]). A task's questions to its client are not passed on.
package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway/view"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// Options configure a [Gateway]. The zero value is usable.
type Options struct {
	// Info is how the gateway introduces itself to clients and servers
	// (default "ferry-gateway").
	Info protocol.Implementation
	// Instructions are sent to clients of every endpoint.
	Instructions string

	// Prefix and Separator name the tools and prompts of the aggregated
	// endpoint (defaults: host.PrefixAlways, "__").
	Prefix    host.PrefixMode
	Separator string
	// PageSize is the most items of a list result (default 500).
	PageSize int

	// Isolate names the servers that get a process per client session in
	// addition to those whose entry says "isolation": "session"; "*"
	// names them all.
	Isolate []string
	// MaxSessionProcesses bounds the per-client processes running at
	// once (default 100); MaxClientProcesses bounds those of one client
	// (default a quarter of MaxSessionProcesses): the caller Auth names,
	// else the client's address (IPv6 by its /64), so that clients behind
	// one proxy share one. A request that would start one beyond either
	// gets an error saying which.
	MaxSessionProcesses int
	MaxClientProcesses  int
	// SessionIdle stops a client's process after this long without a
	// request (default 10 minutes). ClientGone stops a legacy session's
	// sooner, after this long (default 1 minute) without a request while
	// its client holds no request open with the gateway (no GET stream: a
	// client that went without ending its session). Either way the
	// session's next request starts a new process.
	SessionIdle time.Duration
	ClientGone  time.Duration
	// RestartWait bounds how long a request waits for its server to be
	// started again after a crash (default 10 seconds), within the
	// request's own deadline; a server whose restart is further away fails
	// the request at once, saying when. A server is restarted at once
	// after a crash that ends a run of Host.Restart.ResetAfter (default
	// here 5 seconds), with backoff only when it keeps crashing sooner.
	RestartWait time.Duration
	// PendingTTL bounds how long a stateless client's request waits for
	// the client to retry with its answers (default 5 minutes);
	// MaxPending bounds how many wait at once (default 10,000).
	PendingTTL time.Duration
	MaxPending int

	// Host configures the connections to the servers: timeouts, restarts,
	// where their stderr goes, and (for tests and embedding) how streams
	// to them are opened. Its Client, Prefix and Separator are the
	// gateway's to set.
	Host host.Options
	// ClientOptions, when set, adjusts the options of every client the
	// gateway opens to a server (for example to add middleware).
	ClientOptions func(server string, o *client.Options)

	// Middleware wraps the serving of every client request of every
	// endpoint, outside the gateway's forwarding (metrics, traces, logs).
	// A tools/call result passed on undecoded (a jsontext.Value) may be
	// in memory lent by the upstream's transport, which reads another
	// answer into it once the result is written to the client: middleware
	// reads it during the call and copies what it keeps. (What the
	// gateway sends its servers, the clients' Sending middleware sees:
	// see ClientOptions.)
	Middleware []intercept.Middleware
	// HTTP configures the Streamable HTTP handlers (session limits, the
	// Origin and Host checks); the HTTP+SSE handlers take the same
	// checks and limits.
	HTTP streamablehandler.Options
	// Auth, when set, guards every endpoint but /healthz and /readyz: it
	// wraps them as net/http middleware does (see [BearerTokens]), and
	// names the caller with intercept.WithCaller for each session to be
	// bound to the caller that opened it.
	Auth func(http.Handler) http.Handler
	// Hears, when set, decides whether a client hears what a server
	// sends on its own (a [Notice]: a log message, a resource's update):
	// caller is a legacy session's, as its latest request named it, or
	// a stateless listen stream's (nil without Auth); e is the endpoint
	// the client uses. The access rules (package gateway/access) let a
	// caller hear a server's logs when it may use something of the
	// server there, a resource's updates when it may read the resource.
	Hears func(caller *intercept.Caller, e *Endpoint, n Notice) bool
	// Handlers are served beside the endpoints, by pattern, without Auth
	// (behind the Host and Origin checks only): what a client reads before
	// it has credentials, an OAuth resource server's Protected Resource
	// Metadata.
	Handlers map[string]http.Handler
	// Limit, when set, wraps every endpoint behind Auth, inside it (so
	// that it sees the caller Auth names), before a request's body is
	// read: package gateway/limit's rate limits refuse a request there
	// with 429 (see limit.Limiter.HTTP).
	Limit func(http.Handler) http.Handler
	// Metrics, when set, is served at /metrics (behind Auth).
	Metrics http.Handler

	// Logger receives the gateway's diagnostics. Nil discards them.
	Logger *slog.Logger

	// Views are served at /views/NAME/mcp and /views/NAME/sse
	// ([Gateway.SetViews] swaps in others).
	Views *view.Set

	// Replicas, when set, lets replicas of the gateway serve each other's
	// legacy sessions: see [ReplicaOptions].
	Replicas *ReplicaOptions
	// Tasks configure the tasks the gateway runs for its clients
	// (tasks.go); replicas share them through Tasks.Store.
	Tasks TaskOptions
}

// Gateway serves MCP servers over HTTP. Create it with [New], serve its
// ServeHTTP, and stop it with [Gateway.Close].
type Gateway struct {
	opts     Options
	impl     protocol.Implementation
	stamp    []byte // the start of the stateless results it passes on (stampOf)
	owners   owners // the callers of the Streamable HTTP sessions (bind.go)
	log      *slog.Logger
	agg      *front
	pending  pendingSet
	children children
	mux      *http.ServeMux
	gen      atomic.Uint64 // bumped when what a catalog shows may have changed
	inflight atomic.Int64  // client requests being served
	draining atomic.Bool   // told to stop: /readyz answers 503 (drain.go)
	wg       sync.WaitGroup
	closing  chan struct{}
	share    *sharing // nil without Options.Replicas (share.go)
	tasks    *taskManager

	viewSet viewFronts // the views' endpoints (views.go)

	mu    sync.RWMutex
	ups   map[string]*upstream
	order []string // configuration order
	once  sync.Once
}

// New returns a gateway for servers and starts connecting to them (see
// [Gateway.Ready]).
func New(servers []*config.Server, opts *Options) (*Gateway, error) {
	g := &Gateway{ups: map[string]*upstream{}, closing: make(chan struct{})}
	if opts != nil {
		g.opts = *opts
	}
	o := &g.opts
	g.impl = o.Info
	if g.impl.Name == "" {
		g.impl = protocol.Implementation{Name: "ferry-gateway", Version: "0.1.0"}
	}
	g.stamp = stampOf(g.impl)
	g.owners.live = g.liveSessions
	if o.Separator == "" {
		o.Separator = host.DefaultSeparator
	}
	if o.Prefix == "" {
		o.Prefix = host.PrefixAlways
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
	if o.MaxSessionProcesses <= 0 {
		o.MaxSessionProcesses = 100
	}
	if o.MaxClientProcesses <= 0 {
		o.MaxClientProcesses = max(o.MaxSessionProcesses/4, 1)
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 10 * time.Minute
	}
	if o.ClientGone <= 0 {
		o.ClientGone = time.Minute
	}
	if o.RestartWait <= 0 {
		o.RestartWait = 10 * time.Second
	}
	if o.Host.Restart.ResetAfter == 0 {
		o.Host.Restart.ResetAfter = 5 * time.Second
	}
	if o.PendingTTL <= 0 {
		o.PendingTTL = 5 * time.Minute
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 10000
	}
	g.pending = pendingSet{ttl: o.PendingTTL, max: o.MaxPending}
	g.children = children{max: o.MaxSessionProcesses, share: o.MaxClientProcesses}
	g.log = o.Logger
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	// Checked here so that a bad prefix mode fails New, not each server.
	if _, err := host.New(nil, g.hostOptions()); err != nil {
		return nil, err
	}
	if o.Replicas != nil {
		if err := o.Replicas.check(); err != nil {
			return nil, err
		}
		g.share = newSharing(g, *o.Replicas)
		o.Middleware = append(slices.Clip(o.Middleware), g.share.middleware)
	}
	g.tasks = newTaskManager(g)
	g.agg = newFront(g, nil)
	g.SetViews(o.Views)
	g.mux = g.routes()
	if err := g.Update(servers); err != nil {
		g.Close(context.Background())
		return nil, err
	}
	return g, nil
}

// hostOptions are the options of the host of one connection.
func (g *Gateway) hostOptions() *host.Options {
	o := g.opts.Host
	o.Prefix, o.Separator = g.opts.Prefix, g.opts.Separator
	if o.Logger == nil {
		o.Logger = g.log
	}
	return &o
}

// isolated reports whether cfg's server gets a process per session.
func (g *Gateway) isolated(cfg *config.Server) bool {
	if cfg.Transport != config.Stdio {
		return false // a remote server's sessions are its own already
	}
	return cfg.Isolation == "session" || slices.Contains(g.opts.Isolate, cfg.Name) || slices.Contains(g.opts.Isolate, "*")
}

// Update makes the gateway serve servers: servers that are new start,
// servers that are gone stop (their endpoint with them), servers whose
// entry changed restart; the others, and the sessions of the aggregated
// endpoint, are left alone. Disabled entries are left out. The clients
// of every endpoint are told that its lists may have changed.
func (g *Gateway) Update(servers []*config.Server) error {
	want := map[string]*config.Server{}
	var order []string
	var errs []error
	for _, s := range servers {
		if s.Disabled || want[s.Name] != nil {
			continue
		}
		if s.Err != nil {
			errs = append(errs, s.Err)
			continue
		}
		want[s.Name] = s
		order = append(order, s.Name)
	}
	g.mu.Lock()
	var stop []*upstream
	for name, u := range g.ups {
		if cfg := want[name]; cfg == nil || !cfg.Runs(u.cfg) {
			stop = append(stop, u)
			delete(g.ups, name)
		}
	}
	for _, name := range order {
		if g.ups[name] != nil {
			continue
		}
		u, err := newUpstream(g, want[name])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.ups[name] = u
		g.log.Info("gateway: serving server", "server", name, "transport", string(want[name].Transport), "isolated", u.isolated)
	}
	g.order = slices.DeleteFunc(order, func(n string) bool { return g.ups[n] == nil })
	g.mu.Unlock()
	for _, u := range stop {
		g.log.Info("gateway: stopping server", "server", u.name)
		u.close()
	}
	g.changed()
	// Every endpoint is told, a server's own too: the configuration read
	// again may bring access rules that show its clients another part of
	// it, though the server itself is the same.
	ups := g.upstreamList()
	for _, m := range listChanges {
		g.agg.srv.NotifyListChanged(m)
		for _, u := range ups {
			u.front.srv.NotifyListChanged(m)
		}
		g.notifyViews(m)
	}
	return errors.Join(errs...)
}

// changed says that what the catalogs show may have changed.
func (g *Gateway) changed() { g.gen.Add(1) }

// upstreamList returns the upstreams in configuration order.
func (g *Gateway) upstreamList() []*upstream {
	g.mu.RLock()
	defer g.mu.RUnlock()
	out := make([]*upstream, 0, len(g.order))
	for _, n := range g.order {
		out = append(out, g.ups[n])
	}
	return out
}

// anyIsolated reports whether an upstream gives each session its own
// process.
func (g *Gateway) anyIsolated() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for _, u := range g.ups {
		if u.isolated {
			return true
		}
	}
	return false
}

func (g *Gateway) upstream(name string) *upstream {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.ups[name]
}

// frontsOf returns the endpoints that show u.
func (g *Gateway) frontsOf(u *upstream) []*front {
	return append([]*front{g.agg, u.front}, g.viewFrontList()...)
}

// Server returns the MCP server of one upstream's own endpoint, names
// unchanged (ferry proxy serves it over stdio), or nil.
func (g *Gateway) Server(name string) *server.Server {
	if u := g.upstream(name); u != nil {
		return u.front.srv
	}
	return nil
}

// Aggregate returns the MCP server of the aggregated endpoint.
func (g *Gateway) Aggregate() *server.Server { return g.agg.srv }

// Status is the state of each upstream's shared connection, by name.
func (g *Gateway) Status() map[string]host.Status {
	out := map[string]host.Status{}
	for _, u := range g.upstreamList() {
		out[u.name] = u.shared.status()
	}
	return out
}

// Ready waits until every upstream is connected, or ctx ends; the error
// names those that are not.
func (g *Gateway) Ready(ctx context.Context) error {
	var errs []error
	for _, u := range g.upstreamList() {
		if _, err := u.shared.client(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Sessions returns the number of open legacy sessions of every endpoint,
// Streamable HTTP and HTTP+SSE together.
func (g *Gateway) Sessions() int {
	n := g.agg.http.Sessions() + g.agg.sse.Sessions()
	for _, u := range g.upstreamList() {
		n += u.front.http.Sessions() + u.front.sse.Sessions()
	}
	for _, f := range g.viewFrontList() {
		n += f.http.Sessions() + f.sse.Sessions()
	}
	return n
}

// SessionVersions counts the open legacy sessions of every endpoint by
// protocol revision.
func (g *Gateway) SessionVersions() map[string]int {
	out := map[string]int{}
	fronts := []*front{g.agg}
	for _, u := range g.upstreamList() {
		fronts = append(fronts, u.front)
	}
	fronts = append(fronts, g.viewFrontList()...)
	for _, f := range fronts {
		for _, sess := range f.srv.Sessions() {
			out[sess.ProtocolVersion()]++
		}
	}
	return out
}

// Close ends every session, cancels the requests waiting for their
// clients, and stops every server, waiting (within ctx) for their
// processes to exit.
func (g *Gateway) Close(ctx context.Context) error {
	g.once.Do(func() { close(g.closing) })
	g.pending.closeAll(errors.New("the gateway is shutting down"))
	g.agg.close()
	g.closeViews()
	g.mu.Lock()
	ups := g.ups
	g.ups, g.order = map[string]*upstream{}, nil
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, u := range ups {
			wg.Go(u.close)
		}
		wg.Wait()
		g.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
