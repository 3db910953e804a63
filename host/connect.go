package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/sse"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// connect starts the server and runs the handshake, within the connect
// timeout. The error is an *Error.
func (s *Server) connect() (*client.Client, *stdio.ClientStream, error) {
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-base.Done():
		}
	}()
	ctx := base
	if d := s.h.opts.ConnectTimeout; d > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, d, fmt.Errorf("no answer to the handshake within %v", d))
		defer stop()
	}
	name := s.cfg.Name
	t0 := time.Now()
	stream, cs, err := s.open(ctx)
	if err != nil {
		return nil, nil, s.classify(ctx, err, nil)
	}
	if cs != nil {
		s.h.log.Info("spawned", "server", name, "pid", cs.Pid(), "command", commandLine(s.cfg), "took", time.Since(t0).Round(time.Microsecond))
		s.mu.Lock()
		s.cs = cs
		s.mu.Unlock()
	}
	raw := stream
	if s.h.opts.Trace != nil {
		stream = TraceStream(stream, name, s.h.opts.Trace)
	}
	c, err := client.Connect(ctx, client.StreamTransport{Stream: stream}, s.clientOptions())
	if err != nil {
		stream.Close()
		return nil, nil, s.classify(ctx, err, cs)
	}
	// The transport in use: an http entry whose server speaks only
	// HTTP+SSE is reached by SSE, and is shown so.
	transport := s.cfg.Transport
	if transport == config.HTTP && streamable.FellBack(raw) {
		transport = config.SSE
	}
	s.mu.Lock()
	s.status.Transport = transport
	s.mu.Unlock()
	if caps := c.ServerCapabilities(); s.h.opts.WatchTools && c.Stateless() && caps.Tools != nil && caps.Tools.ListChanged {
		// Before the first listing, so that no change is missed.
		if _, err := c.Listen(ctx, protocol.SubscriptionFilter{ToolsListChanged: true}); err != nil {
			s.h.log.Warn("subscriptions/listen failed", "server", name, "error", err)
		}
	}
	return c, cs, nil
}

// noiseHint tells what a stdio server wrote on its stdout that is not
// JSON, "" when nothing: a server that logs there instead of on stderr
// never answers the handshake, and a timeout alone would not say why.
func noiseHint(cs *stdio.ClientStream) string {
	if cs == nil {
		return ""
	}
	n, first := cs.Skipped()
	switch n {
	case 0:
		return ""
	case 1:
		return "the server wrote a line that is not JSON on stdout, which is for JSON-RPC messages: " + first
	}
	return fmt.Sprintf("the server wrote %d lines that are not JSON on stdout, which is for JSON-RPC messages; the first: %s", n, first)
}

// classify turns a failure to start or connect into an *Error.
func (s *Server) classify(ctx context.Context, err error, cs *stdio.ClientStream) *Error {
	e := &Error{Server: s.cfg.Name, Kind: KindUnreachable, Err: err}
	if errors.Is(err, stdio.ErrInvalidCommand) || errors.Is(err, errNoDialer) {
		// A command the system cannot run as given, a transport the
		// program lacks: no restart helps.
		e.Kind = KindConfig
	}
	if cs != nil {
		e.Stderr = tail(cs.Stderr())
		var exit *stdio.ExitError
		if !errors.As(err, &exit) {
			// The handshake failed or timed out: if the process is gone,
			// say how it ended.
			select {
			case <-cs.Done():
				if x := cs.ExitErr(); x != nil {
					e.Err = fmt.Errorf("%w (%w)", err, x)
				}
			default:
			}
		}
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); !errors.Is(err, cause) {
			e.Err = fmt.Errorf("%w: %w", cause, err)
		}
		if !s.closing() {
			e.Kind = KindTimeout
		}
	}
	if hint := noiseHint(cs); hint != "" {
		e.Err = fmt.Errorf("%w (%s)", e.Err, hint)
	}
	if r := s.http; r != nil {
		if code, hdr := r.status(); code == http.StatusUnauthorized || code == http.StatusForbidden {
			e.Kind = KindAuth
			msg := fmt.Sprintf("HTTP %d %s", code, http.StatusText(code))
			if hdr != "" {
				msg += " (WWW-Authenticate: " + hdr + ")"
			}
			e.Err = fmt.Errorf("%s: %w", msg, err)
		}
	}
	return e
}

// clientOptions are the server's client options: the host's callbacks,
// the timeouts, and list changes clearing the tool cache.
func (s *Server) clientOptions() *client.Options {
	var o client.Options
	if f := s.h.opts.Client; f != nil {
		if p := f(s.cfg.Name); p != nil {
			o = *p
		}
	}
	o.RequestTimeout = s.h.opts.RequestTimeout
	if s.cfg.Timeout > 0 {
		o.RequestTimeout = s.cfg.Timeout
	}
	o.MaxRequestTimeout = s.h.opts.MaxRequestTimeout
	// The bound whatever the progress is the user's word: an idle timeout
	// longer than it never raises it (--max-timeout 1s with the default
	// --timeout 60s ends a call after 1 s).
	if o.MaxRequestTimeout > 0 && o.RequestTimeout > o.MaxRequestTimeout {
		o.RequestTimeout = o.MaxRequestTimeout
	}
	user := o.OnListChanged
	o.OnListChanged = func(method string) {
		if method == "notifications/tools/list_changed" {
			s.mu.Lock()
			s.tools = nil
			s.toolsGen++
			s.mu.Unlock()
		}
		if user != nil {
			user(method)
		}
	}
	if o.Logger == nil {
		o.Logger = s.h.opts.Logger
	}
	return &o
}

// open opens the stream to the server; cs is set for a stdio server.
func (s *Server) open(ctx context.Context) (stream jsonrpc.Stream, cs *stdio.ClientStream, err error) {
	cfg := s.cfg
	if f := s.h.opts.Transport; f != nil {
		stream, err = f(ctx, cfg)
		cs, _ = stream.(*stdio.ClientStream)
		return stream, cs, err
	}
	switch cfg.Transport {
	case config.Stdio:
		cmd := &stdio.Command{Path: cfg.Command, Args: cfg.Args, Env: cfg.Env, InheritEnv: s.h.opts.InheritEnv, Dir: cfg.Dir, Logger: s.h.opts.Logger}
		if f := s.h.opts.Stderr; f != nil {
			cmd.Stderr = f(cfg.Name)
		}
		cs, err = cmd.Connect(ctx)
		if err != nil {
			return nil, nil, err
		}
		return cs, cs, nil
	case config.HTTP:
		return s.openHTTP(ctx, func(hc *http.Client, h http.Header) (jsonrpc.Stream, error) {
			return (&streamable.Transport{URL: cfg.URL, Client: hc, Header: h, Logger: s.h.opts.Logger}).Open(ctx)
		})
	case config.WebSocket:
		dial, err := s.dialer()
		if err != nil {
			return nil, nil, err
		}
		return s.openHTTP(ctx, func(hc *http.Client, h http.Header) (jsonrpc.Stream, error) {
			return dial(ctx, Dial{URL: cfg.URL, Client: hc, Header: h, Logger: s.h.opts.Logger})
		})
	case config.SSE:
		return s.openHTTP(ctx, func(hc *http.Client, h http.Header) (jsonrpc.Stream, error) {
			return (&sse.Transport{URL: cfg.URL, Client: hc, Header: h, Logger: s.h.opts.Logger}).Open(ctx)
		})
	}
	return nil, nil, fmt.Errorf("unknown transport %q", cfg.Transport)
}

func (s *Server) openHTTP(ctx context.Context, open func(*http.Client, http.Header) (jsonrpc.Stream, error)) (jsonrpc.Stream, *stdio.ClientStream, error) {
	base := s.h.opts.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	rec := &httpRecorder{base: base.Transport}
	if rec.base == nil {
		rec.base = http.DefaultTransport
	}
	if f := s.h.opts.WrapHTTP; f != nil {
		// Inside the recorder: it sees the answers the wrapper returns.
		rec.base = f(s.cfg, rec.base)
	}
	hc := *base
	hc.Transport = rec
	s.http = rec
	hdr := http.Header{}
	for k, v := range s.cfg.Headers {
		hdr.Set(k, v)
	}
	stream, err := open(&hc, hdr)
	return stream, nil, err
}

// httpRecorder remembers the last refusal of an HTTP server, so that a
// failed handshake can be told apart: credentials refused (401, 403) or
// not reachable.
type httpRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	code int
	auth string
}

func (r *httpRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		r.mu.Lock()
		r.code, r.auth = resp.StatusCode, resp.Header.Get("WWW-Authenticate")
		r.mu.Unlock()
	}
	return resp, err
}

func (r *httpRecorder) status() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.code, r.auth
}

// commandLine is the command of a stdio entry, for messages.
func commandLine(cfg *config.Server) string {
	if cfg.Transport != config.Stdio {
		return cfg.URL
	}
	return strings.TrimSpace(cfg.Command + " " + strings.Join(cfg.Args, " "))
}
