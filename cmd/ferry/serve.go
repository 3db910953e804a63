package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/observe"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

var serveCommand = &command{
	name:    "serve",
	args:    "[-- CMD ARGS]",
	summary: "serve the servers over HTTP: all at /mcp, each at /servers/NAME/mcp (and /sse)",
	help: `Serves the configured servers (or the ad-hoc one) as one MCP server over
Streamable HTTP at /mcp, and each at /servers/NAME/mcp (and /sse); the
configuration's "views" at /views/NAME/mcp (and /sse).
The configuration's "identity" (an OAuth provider's access tokens),
"access" (rules on tools, prompts and resources), "audit" (a record
per call) and "limits" (rates and calls in flight, per caller, tool or
view; shared through --redis) apply to every endpoint. A remote
server's "oauth" "grant" (client_credentials, token_exchange) says how
the gateway authenticates to it; without one it sends the token ferry
login stored. SIGHUP reads the configuration again, taken whole or not
at all; SIGTERM stops in order: /readyz answers 503
at once, requests are served on for --drain-notice, then those
in flight get --drain to finish; a second signal exits at once. Traces go
over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set. --max-timeout bounds a
call to a server (--timeout, an idle bound, is left to the clients).`,
	example: "ferry serve --addr 127.0.0.1:8000 --token-file tokens.txt",
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		o.serve.declare(fs)
		return func(_ context.Context, o *cli) error { return cmdServe(o) }
	},
	ownSignals: true,
}

type serveFlags struct {
	addr, tokenFile, logFormat string
	insecure, noMetrics        bool
	logRequests                bool
	isolate, origins, hosts    listFlag
	drain, drainNotice         time.Duration
	maxSessions, maxProcs      int
	redis, sessionKeys         string
	advertise                  string
}

// declare declares the flags of ferry serve.
func (f *serveFlags) declare(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "addr", "127.0.0.1:8000", "where to listen, `HOST:PORT` (default 127.0.0.1:8000)")
	fs.StringVar(&f.tokenFile, "token-file", "", "bearer tokens clients must send, one a line in `FILE`: TOKEN [CALLER [ROLE...]] (or FERRY_GATEWAY_TOKENS); needed beyond loopback, unless the configuration has an \"identity\"")
	fs.BoolVar(&f.insecure, "insecure-no-auth", false, "listen beyond loopback without inbound auth")
	fs.Var(&f.isolate, "isolate", "a process per client session for `SERVER` (* for all); or \"isolation\": \"session\" in its entry")
	fs.Var(&f.origins, "allow-origin", "a browser `ORIGIN` to accept too (repeatable)")
	fs.Var(&f.hosts, "allow-host", "a `HOST` name to accept too (repeatable)")
	fs.DurationVar(&f.drain, "drain", 10*time.Second, "time `D` the requests in flight get to finish once no new one is accepted (default 10s)")
	fs.DurationVar(&f.drainNotice, "drain-notice", 0, "on SIGTERM, serve on for `D` with /readyz answering 503, for a balancer to stop sending requests first (behind one: longer than its check interval × fall)")
	fs.IntVar(&f.maxSessions, "max-sessions", 10000, "bound `N` on client sessions (default 10000)")
	fs.IntVar(&f.maxProcs, "max-session-processes", 100, "bound `N` on per-session processes (default 100)")
	fs.StringVar(&f.logFormat, "log-format", "text", "log `text|json` (default text)")
	fs.BoolVar(&f.logRequests, "log-requests", false, "log every request")
	fs.BoolVar(&f.noMetrics, "no-metrics", false, "no /metrics endpoint")
	fs.StringVar(&f.redis, "redis", "", "share sessions with the other replicas through the Redis at `URL` (redis://...)")
	fs.StringVar(&f.sessionKeys, "session-keys", "", "keys that seal session ids for every replica, hex, one a line, current first, in `FILE` (default: from --redis)")
	fs.StringVar(&f.advertise, "advertise", "", "the `URL` the other replicas reach this one at (http://10.0.0.5:8000): they forward there the requests of sessions whose isolated server's process runs here")
}

// cmdServe runs the gateway until SIGINT or SIGTERM.
func cmdServe(o *cli) error {
	f := &o.serve
	ctx := context.Background()
	// SIGHUP reloads rather than stops; SIGINT and SIGTERM stop in order.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	log, err := serveLogger(o.stderr, f)
	if err != nil {
		return err
	}
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	adhoc := len(o.adhoc) > 0
	auth, err := inboundAuth(f, log)
	if err != nil {
		return err
	}
	id, err := identityAuth(o.files, log)
	switch {
	case err != nil:
		return err
	case id != nil && auth != nil:
		return usageErrorf("the configuration's \"identity\" and --token-file (or FERRY_GATEWAY_TOKENS) are two ways to authenticate clients: choose one")
	case id != nil:
		auth = id.auth()
		log.Info("clients must send an access token of the configuration's identity provider")
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	if !loopback(ln.Addr()) && auth == nil {
		if !f.insecure {
			ln.Close()
			return usageErrorf("%s is reachable beyond this machine: give clients tokens (--token-file FILE or FERRY_GATEWAY_TOKENS, or an \"identity\" in the configuration), or say --insecure-no-auth", f.addr)
		}
		fmt.Fprintf(o.stderr, "ferry serve: WARNING: listening on %s WITHOUT AUTHENTICATION: anyone who reaches it can use every server\n", ln.Addr())
		log.Warn("listening beyond loopback without authentication", "addr", ln.Addr().String())
	}

	defer tuneGC(os.Getenv)() // see gcHeadroom
	opts := &gateway.Options{
		Info:                protocol.Implementation{Name: "ferry-gateway", Version: version},
		Prefix:              host.PrefixMode(o.prefix),
		Separator:           o.separator,
		Isolate:             f.isolate,
		MaxSessionProcesses: f.maxProcs,
		Host: host.Options{
			ConnectTimeout: o.connectTO,
			// A gateway's client has timeouts of its own and cancels what
			// it gives up on; the gateway bounds an upstream call by
			// --max-timeout only, without an idle timer per call (a tool
			// may work for minutes without progress).
			RequestTimeout:    -1,
			MaxRequestTimeout: negIfZero(o.maxTimeout),
			Logger:            log,
			Stderr:            func(server string) io.Writer { return &prefixWriter{w: o.stderr, prefix: "[" + server + "] "} },
			// The servers get the variables they need, not the
			// gateway's secrets (OTLP headers, API keys, its tokens).
			InheritEnv: o.inheritEnv,
			Dialers:    dialers(),
		},
		HTTP:   streamablehandler.Options{MaxSessions: f.maxSessions, AllowedOrigins: f.origins, AllowedHosts: f.hosts, Logger: log},
		Auth:   auth,
		Logger: log,
	}
	opts.Handlers = id.handlers() // the Protected Resource Metadata
	setupUpstreamAuth(o, servers, opts, id != nil, log)
	if !o.verbose {
		opts.Host.Stderr = nil
	}
	obs, stopTracing, err := instrument(ctx, opts, f, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopTracing()
	replicas, stopSharing, err := replicaOptions(ctx, f, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer stopSharing()
	opts.Replicas = replicas
	pol, err := newServePolicy(o.files, opts, o.stderr, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer pol.close()
	id.stepUp(pol, opts)
	pol.add(reloadIdentity(id, log))
	id.hearIssuer(opts)
	if err := setupLimits(o.files, opts, pol, log); err != nil {
		ln.Close()
		return err
	}
	bindViews, err := setupViews(o.files, opts, pol)
	if err != nil {
		ln.Close()
		return err
	}
	g, err := gateway.New(servers, opts)
	if err != nil {
		ln.Close()
		return err
	}
	bindViews(g)
	if obs != nil && opts.Metrics != nil {
		watch(obs, g)
	}
	names := make([]string, 0, len(servers))
	for _, s := range servers {
		names = append(names, s.Name)
	}
	fmt.Fprintf(o.stderr, "ferry serve: http://%s/mcp (%s)\n", ln.Addr(), strings.Join(names, ", "))
	log.Info("listening", "addr", ln.Addr().String(), "servers", names)

	run, stop := context.WithCancel(context.Background())
	defer stop()
	go func() {
		for s := range sigs {
			switch s {
			case syscall.SIGHUP:
				if adhoc {
					log.Info("SIGHUP: nothing to reload for a server given on the command line")
					continue
				}
				reload(o, g, pol, log)
			default:
				if run.Err() != nil {
					log.Warn("second signal: exiting now", "signal", s.String())
					os.Exit(128 + int(s.(syscall.Signal)))
				}
				log.Info("stopping", "signal", s.String())
				stop()
			}
		}
	}()
	err = g.Serve(run, ln, &gateway.ServeOptions{Drain: f.drain, DrainNotice: f.drainNotice})
	stopProfile()
	return err
}

// stopProfile ends a profile of the run (see profile.go).
var stopProfile = func() {}

// reload reads the configuration again and applies it.
func reload(o *cli, g *gateway.Gateway, pol *servePolicy, log *slog.Logger) {
	servers, err := o.loadServers()
	if err != nil {
		log.Error("SIGHUP: the configuration cannot be read; nothing changed", "error", err)
		return
	}
	// A configuration is taken whole or not at all: its servers too wait
	// for its rules, views and limits to build.
	if err := pol.reload(o.files); err != nil {
		log.Error("SIGHUP: the configuration is refused; nothing changed", "error", err)
		return
	}
	if err := g.Update(servers); err != nil {
		log.Warn("SIGHUP: some servers could not be used", "error", err)
	}
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	log.Info("SIGHUP: configuration read again", "servers", names)
}

func serveLogger(w io.Writer, f *serveFlags) (*slog.Logger, error) {
	level := slog.LevelInfo
	if f.logRequests {
		level = slog.LevelDebug
	}
	ho := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, usageErrorf("--log-format must be text or json, not %q", f.logFormat)
}

// inboundAuth returns the bearer-token middleware when tokens are given.
func inboundAuth(f *serveFlags, log *slog.Logger) (func(http.Handler) http.Handler, error) {
	var tokens []gateway.Token
	if f.tokenFile != "" {
		file, err := os.Open(f.tokenFile)
		if err != nil {
			return nil, usageErrorf("--token-file: %v", err)
		}
		defer file.Close()
		tokens, err = gateway.ReadTokens(file)
		if err != nil {
			return nil, usageErrorf("--token-file %s: %v", f.tokenFile, err)
		}
	}
	if env := os.Getenv("FERRY_GATEWAY_TOKENS"); env != "" {
		for _, t := range gateway.SplitTokens(env) {
			tokens = append(tokens, gateway.Token{Token: t})
		}
	}
	// The tokens are the gateway's own: a server that read them could
	// call it as any of its clients. Servers do not inherit the
	// environment, unless --inherit-env says so.
	os.Unsetenv("FERRY_GATEWAY_TOKENS")
	if len(tokens) == 0 {
		return nil, nil
	}
	log.Info("clients must send a bearer token", "tokens", len(tokens))
	return gateway.BearerCallers(tokens), nil
}

// loopback reports whether addr can only be reached from this machine.
func loopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// instrument adds metrics, traces and request logs to the gateway's
// options; the function returned flushes the traces.
func instrument(ctx context.Context, opts *gateway.Options, f *serveFlags, log *slog.Logger) (*observe.Observer, func(), error) {
	tp, stopTP, err := observe.TracerProviderFromEnv(ctx, "ferry-gateway")
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP: %w", err)
	}
	stop := func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTP(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			log.Warn("flushing traces", "error", err)
		}
	}
	if f.noMetrics && tp == nil && !f.logRequests {
		return nil, stop, nil
	}
	// Without OTLP, no span is made: the trace context a client sends
	// still goes on upstream.
	oo := &observe.Options{Logger: log, TracerProvider: noop.NewTracerProvider()}
	if tp != nil {
		oo.TracerProvider = tp
		log.Info("exporting traces over OTLP")
	}
	obs, err := observe.New(oo)
	if err != nil {
		return nil, nil, err
	}
	opts.Middleware = append(opts.Middleware, obs.Middleware("gateway"))
	// What the gateway sends its servers is observed by its clients'
	// own middleware: a client span, the trace context into _meta.
	adjust := opts.ClientOptions
	opts.ClientOptions = func(server string, o *client.Options) {
		if adjust != nil {
			adjust(server, o)
		}
		o.Sending = append(o.Sending, obs.SendingMiddleware(server))
	}
	if !f.noMetrics {
		opts.Metrics = obs.Handler()
	}
	return obs, stop, nil
}

// watch makes the metrics report the gateway's sessions and servers.
func watch(obs *observe.Observer, g *gateway.Gateway) {
	obs.Watch(nil, func() observe.State {
		st := observe.State{Sessions: g.SessionVersions()}
		for name, s := range g.Status() {
			st.Upstreams = append(st.Upstreams, observe.Upstream{Name: name, State: s.State.String(), Restarts: s.Restarts})
		}
		return st
	})
}
