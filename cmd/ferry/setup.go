package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// session is a host with the servers of the run.
type session struct {
	*host.Host
	servers []*config.Server
	// startErr joins the failures of the servers that did not start.
	startErr error
}

// servers returns the configuration entries of the run: an ad-hoc server
// (after -- or a URL as the first argument), or those of --config files
// or of the files found in the usual places.
func (o *cli) loadServers() ([]*config.Server, error) {
	servers, err := o.readServers()
	if err == nil {
		o.loaded = servers // the last read, for offerLogin
	}
	return servers, err
}

func (o *cli) readServers() ([]*config.Server, error) {
	if s, err := o.adhocServer(); s != nil || err != nil {
		return []*config.Server{s}, err
	}
	opts := config.DefaultOptions()
	paths := []string(o.configs)
	discovered := len(paths) == 0
	if discovered {
		env := config.HostEnv()
		var project []string
		for _, l := range config.Discover(env) {
			if l.Project {
				project = append(project, l.Path)
				continue
			}
			paths = append(paths, l.Path)
		}
		if len(project) > 0 && o.trustProject(env.Dir, project) {
			paths = append(project, paths...) // project files first, as found
		}
		if len(paths) == 0 && len(project) > 0 {
			return nil, usageErrorf("no configuration to use: the project files of this folder are not trusted (answer yes at a terminal once, or pass --trust-folder)")
		}
		if len(paths) == 0 {
			var where []string
			for _, l := range config.Locations(config.HostEnv()) {
				where = append(where, l.Path)
			}
			return nil, usageErrorf("no configuration file found; looked for:\n%s\nUse --config FILE, or give a server: ferry tools -- npx -y PACKAGE",
				strings.Join(where, "\n"))
		}
	}
	var files []*config.File
	for _, p := range paths {
		f, err := config.Load(p, opts)
		if err != nil {
			if discovered && errors.Is(err, config.ErrNoServers) {
				continue
			}
			return nil, err
		}
		files = append(files, f)
	}
	o.files = files
	servers, shadowed := config.Merge(files...)
	for _, s := range shadowed {
		o.logf("server %q of %s is hidden by the one of the same name in an earlier file", s.Name, s.Source)
	}
	return servers, nil
}

// adhocServer builds the entry of a server given on the command line.
func (o *cli) adhocServer() (*config.Server, error) {
	if len(o.adhoc) > 0 {
		s := &config.Server{Name: adhocName(o.adhoc), Transport: config.Stdio, Command: o.adhoc[0], Args: o.adhoc[1:], Source: "command line"}
		if o.cwd != "" {
			abs, err := filepath.Abs(o.cwd)
			if err != nil {
				return nil, usageErrorf("--cwd: %v", err)
			}
			s.Dir = abs
		}
		env, err := adhocEnv(o.envs, os.LookupEnv)
		if err != nil {
			return nil, err
		}
		s.Env = env
		return s, nil
	}
	i := slices.IndexFunc(o.args, isURL)
	if o.cmd.name == "read" && len(o.args) < 2 {
		i = -1 // the URI to read, which may be an http URL
	}
	if i < 0 {
		return nil, nil
	}
	raw := o.args[i]
	o.args = slices.Delete(slices.Clone(o.args), i, i+1)
	s := &config.Server{Name: urlName(raw), Transport: config.HTTP, URL: raw, Source: "command line"}
	if o.sse {
		s.Transport = config.SSE
	}
	if isWebSocketURL(raw) {
		s.Transport = config.WebSocket
	}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageErrorf("--header %q: want 'Name: value'", h)
		}
		if s.Headers == nil {
			s.Headers = map[string]string{}
		}
		s.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return s, nil
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || isWebSocketURL(s)
}

func isWebSocketURL(s string) bool {
	return strings.HasPrefix(s, "ws://") || strings.HasPrefix(s, "wss://")
}

// adhocName names a server from its command line: the package a runner
// (npx, uvx, ...) starts, else the program.
func adhocName(argv []string) string {
	name := argv[0]
	switch filepath.Base(argv[0]) {
	case "npx", "uvx", "bunx", "pnpx", "pipx", "docker", "node", "python", "python3", "uv", "go", "deno", "bun":
		for _, a := range argv[1:] {
			if !strings.HasPrefix(a, "-") && a != "run" && a != "dlx" && a != "x" {
				name = a
				break
			}
		}
	}
	// .../server-everything/dist/index.js is server-everything.
	for dir := name; ; {
		base := strings.TrimSuffix(filepath.Base(dir), filepath.Ext(dir))
		switch base {
		case "index", "main", "cli", "server", "dist", "build", "lib", "src", "bin":
			parent := filepath.Dir(dir)
			if parent != dir && parent != "." && parent != "/" {
				dir = parent
				continue
			}
		}
		name = filepath.Base(dir)
		break
	}
	if i := strings.LastIndex(name, "@"); i > 0 { // pkg@1.2.3
		name = name[:i]
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".js"), ".py")
	return sanitizeName(name)
}

// urlName names a server given by URL: its host as written, with the
// port when there is one ("127.0.0.1-3001", "mcp.example.com"). An IPv6
// address is named "ip6-" and its address with "-" for ":"
// ("ip6-2001-db8--1-8080"), the loopback ::1 "ip6-localhost" as in
// /etc/hosts, a mapped IPv4 address by the IPv4 one: not "--1-3001", which reads as a flag on a command line,
// and no ":", which separates the server from a prompt or a resource in
// ferry chat.
func urlName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "server"
	}
	name := u.Hostname()
	if ip, err := netip.ParseAddr(name); err == nil && ip.Is6() {
		switch {
		case ip.WithZone("") == netip.IPv6Loopback():
			name = "ip6-localhost"
		case ip.Is4In6():
			name = ip.Unmap().String()
		default:
			name = "ip6-" + name
		}
	}
	if p := u.Port(); p != "" {
		name += "-" + p
	}
	b := []byte(name)
	for i, c := range b {
		if c != '.' && sanitizeName(string(c)) != string(c) {
			b[i] = '-'
		}
	}
	return string(b)
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	if len(b) == 0 {
		return "server"
	}
	return string(b)
}

func (o *cli) startServers(ctx context.Context, servers []*config.Server, names ...string) (*session, error) {
	return o.startServersWith(ctx, servers, o.hostOptions(), names...)
}

// startServersWith is startServers with the host's options.
func (o *cli) startServersWith(ctx context.Context, servers []*config.Server, opts *host.Options, names ...string) (*session, error) {
	h, err := host.New(servers, opts)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	for _, n := range names {
		if _, err := h.Server(n); err != nil {
			h.Close()
			return nil, usageErrorf("no server named %q (configured: %s)", n, serverNames(servers))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.connectTO+time.Second)
	defer cancel()
	startErr := h.Start(ctx, names...)
	return &session{Host: h, servers: servers, startErr: startErr}, nil
}

func serverNames(servers []*config.Server) string {
	var n []string
	for _, s := range servers {
		n = append(n, s.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// adhocEnv reads the --env flags of an ad-hoc server: K=V, or K alone
// for the value of K in ferry's environment (which the server does not
// inherit), so that a secret need not be written on the command line,
// where every user of the machine can read it.
func adhocEnv(flags []string, lookup func(string) (string, bool)) (map[string]string, error) {
	var env map[string]string
	for _, kv := range flags {
		k, v, ok := strings.Cut(kv, "=")
		if k == "" {
			return nil, usageErrorf("--env %q: want K=V or K", kv)
		}
		if !ok {
			if v, ok = lookup(k); !ok {
				return nil, usageErrorf("--env %s: %s is not set in ferry's environment", k, k)
			}
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return env, nil
}

func (o *cli) hostOptions() *host.Options {
	opts := &host.Options{
		ConnectTimeout:    o.connectTO,
		RequestTimeout:    negIfZero(o.timeout),
		MaxRequestTimeout: negIfZero(o.maxTimeout),
		// A one-shot command retries a server that crashes while starting
		// a couple of times, quickly.
		Restart:    host.Backoff{Initial: 250 * time.Millisecond, Max: time.Second, MaxAttempts: 3},
		Prefix:     host.PrefixMode(o.prefix),
		Separator:  o.separator,
		Client:     o.clientOptions,
		WrapHTTP:   o.wrapHTTP,
		InheritEnv: o.inheritEnv,
		Dialers:    dialers(),
	}
	if o.verbose {
		opts.Logger = slog.New(slog.NewTextHandler(o.term.writer(), &slog.HandlerOptions{Level: slog.LevelInfo}))
		opts.Stderr = func(server string) io.Writer { return &prefixWriter{w: o.term.writer(), prefix: "[" + server + "] "} }
	}
	if o.tracer != nil {
		opts.Trace = o.tracer.event
	}
	return opts
}

func negIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// clientOptions are the callbacks of every server's client.
func (o *cli) clientOptions(server string) *client.Options {
	co := &client.Options{
		Info:            protocol.Implementation{Name: "ferry", Version: version},
		ProtocolVersion: o.protocol,
		LogLevel:        protocol.LoggingLevel(o.logLevel),
		Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return o.term.elicit(ctx, server, p)
		},
		OnLog: func(p *protocol.LoggingMessageParams) {
			if o.logLevel != "" {
				o.logf("[%s] %s: %s", server, p.Level, logText(p))
			}
		},
	}
	if len(o.roots) > 0 {
		var roots []protocol.Root
		for _, r := range o.roots {
			abs, err := filepath.Abs(r)
			if err != nil {
				continue
			}
			roots = append(roots, protocol.Root{URI: (&url.URL{Scheme: "file", Path: abs}).String(), Name: filepath.Base(abs)})
		}
		co.Roots = func(context.Context) ([]protocol.Root, error) { return roots, nil }
	}
	return co
}

func logText(p *protocol.LoggingMessageParams) string {
	s, ok := p.Data.(string)
	if !ok {
		b, _ := json.Marshal(p.Data)
		s = string(b)
	}
	if p.Logger != "" {
		s = p.Logger + ": " + s
	}
	return s
}

// logf writes a diagnostic line on stderr.
func (o *cli) logf(format string, a ...any) {
	o.term.printf(format+"\n", a...)
}

// prefixWriter prefixes the lines a server writes on stderr.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.w.Write(append([]byte(p.prefix), b...))
	return len(b), nil
}
