// Package host runs many MCP servers for one program: it starts them
// concurrently from their configuration entries (package config),
// applies per-server connect and request timeouts, restarts a server that
// crashed (at once after a healthy run, with exponential backoff while it
// keeps crashing as it starts, failing calls fast while it is down), and
// presents their tools as one list with collision-free names.
//
// The ferry command stands on it, and so can a gateway or an agent.
package host

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Defaults of [Options].
const (
	DefaultConnectTimeout    = 60 * time.Second
	DefaultRequestTimeout    = 60 * time.Second
	DefaultMaxRequestTimeout = 10 * time.Minute
	DefaultSeparator         = "__"
)

// Options configure a [Host]. The zero value is usable.
type Options struct {
	// ConnectTimeout bounds starting a server and the protocol handshake
	// (default [DefaultConnectTimeout]; npx may have a package to fetch).
	ConnectTimeout time.Duration
	// RequestTimeout is how long a request may go without an answer or a
	// progress notification, unless the server's entry sets a timeout
	// (default [DefaultRequestTimeout]); MaxRequestTimeout bounds a
	// request whatever its progress (default [DefaultMaxRequestTimeout]).
	// Negative disables either.
	RequestTimeout    time.Duration
	MaxRequestTimeout time.Duration

	// Restart governs restarting servers that crash.
	Restart Backoff

	// Separator joins a server's name and a tool's in the aggregated
	// list (default "__"); it must use only letters, digits, _ and -.
	Separator string
	// Prefix says when tool names get their server's name in front.
	Prefix PrefixMode
	// Allow, when not empty, keeps only the aggregated tools whose
	// qualified names match one of these path.Match patterns; Deny drops
	// those that match. The entries' own allowedTools and blockedTools
	// apply first.
	Allow, Deny []string

	// Client returns the client options of a server: its callbacks
	// (elicitation, sampling, roots, progress, logs). The host sets the
	// timeouts and wraps OnListChanged. Nil means defaults.
	Client func(server string) *client.Options
	// Transport, when set, opens the stream to a server instead of the
	// built-in stdio, Streamable HTTP and SSE transports (tests and
	// embedders use it for in-process servers).
	Transport func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error)
	// Dialers open the streams of servers by their URL's scheme, for the
	// transports the host does not link itself: a program that wants
	// WebSocket servers sets "ws" and "wss" to a Dialer of package
	// websocket's Transport. An entry whose scheme has none fails with
	// KindConfig.
	Dialers map[string]Dialer
	// HTTPClient makes the requests of HTTP and SSE servers (default: a
	// client of its own).
	HTTPClient *http.Client
	// WrapHTTP, when set, wraps the RoundTripper of each HTTP or SSE
	// server's requests (ferry's command puts the tokens of its
	// authorizations on them this way).
	WrapHTTP func(s *config.Server, rt http.RoundTripper) http.RoundTripper
	// InheritEnv gives stdio servers this process's whole environment,
	// secrets included, instead of the few variables a program needs
	// (see package transport/stdio); an entry's env is set on top either
	// way.
	InheritEnv bool
	// Stderr, when set, returns where the stderr of a stdio server is
	// copied as it arrives (nil for nowhere); the end of it is kept
	// anyway for errors.
	Stderr func(server string) io.Writer
	// WatchTools keeps tool lists current with stateless servers too: it
	// opens a subscriptions/listen stream for tool list changes with each
	// stateless server that announces them (legacy servers send them
	// anyway). Long-running hosts want it; one-shot commands do not.
	WatchTools bool
	// Trace, when set, sees every JSON-RPC message exchanged with every
	// server.
	Trace func(*TraceEvent)
	// Logger receives the stages of each server's life (spawned,
	// connected, crashed, restarting). Nil discards them.
	Logger *slog.Logger
}

// Backoff is the restart policy.
type Backoff struct {
	// Disable stops crashed servers from being restarted.
	Disable bool
	// Initial is the first delay before a restart (default 500ms); each
	// failed attempt doubles it up to Max (default 30s).
	Initial, Max time.Duration
	// ResetAfter is the uptime after which a server counts as healthy
	// (default 1m): one that crashes after it is restarted at once, and
	// the delay goes back to Initial. Backoff is for a server that keeps
	// crashing sooner, as it starts.
	ResetAfter time.Duration
	// MaxAttempts is how many attempts in a row may fail before the
	// server is given up; 0 means no limit.
	MaxAttempts int
}

// PrefixMode says when aggregated tool names carry their server's name.
type PrefixMode string

// The prefix modes.
const (
	// PrefixAlways names every tool server__tool (the default).
	PrefixAlways PrefixMode = "always"
	// PrefixOnConflict prefixes only the tools whose names more than one
	// server uses.
	PrefixOnConflict PrefixMode = "on-conflict"
	// PrefixNever keeps tool names as they are; of tools with the same
	// name, the first server's wins.
	PrefixNever PrefixMode = "never"
)

// Host runs a set of servers. Its methods are safe for concurrent use.
type Host struct {
	opts Options
	log  *slog.Logger

	smu     sync.RWMutex // guards servers and byName, which Apply replaces
	servers []*Server
	byName  map[string]*Server

	closing   chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup

	mu    sync.Mutex
	names map[string]route // qualified tool name -> server and tool
}

type route struct{ server, tool string }

// New returns a host for servers; none is started yet. Entries with the
// same name as an earlier one are ignored (see config.Merge).
func New(servers []*config.Server, opts *Options) (*Host, error) {
	h := &Host{byName: map[string]*Server{}, closing: make(chan struct{})}
	if opts != nil {
		h.opts = *opts
	}
	o := &h.opts
	o.ConnectTimeout = orDefault(o.ConnectTimeout, DefaultConnectTimeout)
	o.RequestTimeout = orDefault(o.RequestTimeout, DefaultRequestTimeout)
	o.MaxRequestTimeout = orDefault(o.MaxRequestTimeout, DefaultMaxRequestTimeout)
	o.Restart.Initial = orDefault(o.Restart.Initial, 500*time.Millisecond)
	o.Restart.Max = orDefault(o.Restart.Max, 30*time.Second)
	o.Restart.ResetAfter = orDefault(o.Restart.ResetAfter, time.Minute)
	if o.Separator == "" {
		o.Separator = DefaultSeparator
	}
	if !validName(o.Separator) {
		return nil, errors.New("host: the separator must use only letters, digits, _ and -")
	}
	switch o.Prefix {
	case "":
		o.Prefix = PrefixAlways
	case PrefixAlways, PrefixOnConflict, PrefixNever:
	default:
		return nil, errors.New(`host: the prefix mode must be "always", "on-conflict" or "never"`)
	}
	h.log = o.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	for _, cfg := range servers {
		if _, dup := h.byName[cfg.Name]; dup {
			continue
		}
		s := newServer(h, cfg)
		h.servers = append(h.servers, s)
		h.byName[cfg.Name] = s
	}
	return h, nil
}

func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d < 0:
		return 0
	case d == 0:
		return def
	}
	return d
}

// Servers returns the servers in configuration order.
func (h *Host) Servers() []*Server {
	h.smu.RLock()
	defer h.smu.RUnlock()
	return slices.Clone(h.servers)
}

// Server returns the server of that name, or an *[Error] of kind
// KindUnknown.
func (h *Host) Server(name string) (*Server, error) {
	h.smu.RLock()
	s, ok := h.byName[name]
	h.smu.RUnlock()
	if ok {
		return s, nil
	}
	return nil, &Error{Kind: KindUnknown, Err: errors.New("no server named " + quote(name))}
}

// Start starts the named servers (every enabled one when none is named),
// all at once, and waits until each is ready, has failed, or ctx is done.
// The error joins the failures (each an *[Error]); the servers that did
// start are usable either way.
func (h *Host) Start(ctx context.Context, names ...string) error {
	var list []*Server
	if len(names) == 0 {
		for _, s := range h.Servers() {
			if !s.cfg.Disabled {
				list = append(list, s)
			}
		}
	} else {
		for _, n := range names {
			s, err := h.Server(n)
			if err != nil {
				return err
			}
			list = append(list, s)
		}
	}
	return startAll(ctx, list)
}

// startAll starts servers all at once and waits until each is ready, has
// failed, or ctx is done.
func startAll(ctx context.Context, list []*Server) error {
	for _, s := range list {
		s.start()
	}
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		wg.Go(func() { errs[i] = s.waitStarted(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops every server and waits for them to exit.
func (h *Host) Close() error {
	h.closeOnce.Do(func() { close(h.closing) })
	for _, s := range h.Servers() {
		s.shut()
	}
	h.wg.Wait()
	return nil
}

func quote(s string) string { return `"` + s + `"` }
