package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// State is where a server is in its life.
type State int

// The states of a server.
const (
	// Idle: not started.
	Idle State = iota
	// Starting: being launched or connected.
	Starting
	// Ready: connected and usable.
	Ready
	// Down: crashed or failed to start; a restart is scheduled.
	Down
	// Failed: not usable and not being restarted.
	Failed
	// Disabled: disabled in its configuration.
	Disabled
	// Stopped: stopped by [Host.Close].
	Stopped
)

var stateNames = [...]string{"idle", "starting", "ready", "down", "failed", "disabled", "stopped"}

// String returns the state's name ("ready", "down", ...).
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Status is a snapshot of a server.
type Status struct {
	Name      string
	Transport config.Transport
	State     State
	// Stateless, Version and Info describe the connection (when ready or
	// after it ended): the protocol era, the negotiated revision and the
	// server's name and version.
	Stateless bool
	Version   string
	Info      protocol.Implementation
	// ConnectTime is how long the last successful start took, from
	// launch to the end of the handshake.
	ConnectTime time.Duration
	// Since is when the server entered its state.
	Since time.Time
	// Restarts counts the restarts after crashes or failed starts.
	Restarts int
	// Pid is the process id of a stdio server while it runs.
	Pid int
	// Err is why the server is down or failed (an *[Error]).
	Err error
	// RetryAt is when a server that is down is started again.
	RetryAt time.Time
}

// Server is one server of a [Host].
type Server struct {
	h   *Host
	cfg *config.Server

	mu       sync.Mutex
	state    State
	changed  chan struct{} // closed and replaced at each state change
	started  bool
	c        *client.Client
	cs       *stdio.ClientStream
	status   Status
	tools    []protocol.Tool
	toolsGen int // bumped when the list changes
	http     *httpRecorder

	// quit is closed to stop the server: by Host.Close, or by Apply when
	// its entry is removed or changed; exited is closed when its life
	// (run) has ended.
	quit     chan struct{}
	quitOnce sync.Once
	exited   chan struct{}
}

func newServer(h *Host, cfg *config.Server) *Server {
	s := &Server{h: h, cfg: cfg, changed: make(chan struct{}), quit: make(chan struct{}), exited: make(chan struct{})}
	s.status = Status{Name: cfg.Name, Transport: cfg.Transport, Since: time.Now()}
	switch {
	case cfg.Disabled:
		// A disabled entry's problems do not matter until it is enabled.
		s.state = Disabled
	case cfg.Err != nil:
		s.state = Failed
		s.status.Err = &Error{Server: cfg.Name, Kind: KindConfig, Err: cfg.Err}
	}
	s.status.State = s.state
	return s
}

// Name returns the server's name.
func (s *Server) Name() string { return s.cfg.Name }

// Config returns the server's configuration entry.
func (s *Server) Config() *config.Server { return s.cfg }

// Status returns a snapshot of the server's state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Stderr returns the end of what a stdio server wrote on stderr.
func (s *Server) Stderr() string {
	s.mu.Lock()
	cs := s.cs
	s.mu.Unlock()
	if cs == nil {
		return ""
	}
	return cs.Stderr()
}

// setState records a state change and wakes whoever waits for one.
// s.mu must be held.
func (s *Server) setState(st State, err error) {
	s.state = st
	s.status.State = st
	s.status.Err = err
	s.status.Since = time.Now()
	if st != Down {
		s.status.RetryAt = time.Time{}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// start launches the server's life cycle once.
func (s *Server) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.state == Failed || s.state == Disabled {
		return
	}
	if s.closing() {
		return
	}
	s.started = true
	s.setState(Starting, nil)
	s.h.wg.Go(func() {
		defer close(s.exited)
		s.run()
	})
}

// unusable returns the error for a server that cannot be used now, or nil
// while it is ready or starting. s.mu must be held.
func (s *Server) unusable() error {
	switch s.state {
	case Idle:
		return &Error{Server: s.cfg.Name, Kind: KindUnreachable, Err: errors.New("not started")}
	case Down, Failed:
		return s.status.Err
	case Disabled:
		return &Error{Server: s.cfg.Name, Kind: KindDisabled, Err: errors.New("disabled in " + s.cfg.Source)}
	case Stopped:
		return &Error{Server: s.cfg.Name, Kind: KindUnreachable, Err: errors.New("stopped")}
	}
	return nil
}

// waitStarted waits until a start attempt settled: ready, or given up.
// A server that is down and will be restarted is waited for too.
func (s *Server) waitStarted(ctx context.Context) error {
	for {
		s.mu.Lock()
		st, ch := s.state, s.changed
		err := s.unusable()
		s.mu.Unlock()
		switch st {
		case Ready:
			return nil
		case Failed, Disabled, Stopped, Idle:
			return err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if err != nil {
				return err
			}
			return &Error{Server: s.cfg.Name, Kind: KindTimeout, Err: context.Cause(ctx), Stderr: s.Stderr()}
		}
	}
}

// Client returns the server's client. A server that is starting is
// waited for (within ctx), as is one whose connection just ended (until
// that is recorded); one that is down fails at once with an *[Error]
// saying why and when it restarts.
func (s *Server) Client(ctx context.Context) (*client.Client, error) {
	for {
		s.mu.Lock()
		st, ch, c := s.state, s.changed, s.c
		err := s.unusable()
		s.mu.Unlock()
		switch st {
		case Ready:
			if !connEnded(c) {
				return c, nil
			}
		case Starting:
		default:
			return nil, err
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, &Error{Server: s.cfg.Name, Kind: KindTimeout, Err: fmt.Errorf("still starting: %w", context.Cause(ctx))}
		}
	}
}

// connEnded reports whether c's connection has ended.
func connEnded(c *client.Client) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// run is the server's life: start, serve until the connection ends,
// restart (at once after a run of ResetAfter, else with backoff), until
// the host closes.
func (s *Server) run() {
	b := s.h.opts.Restart
	delay := b.Initial
	failures := 0
	for {
		healthy := false // the run that ended lasted ResetAfter
		start := time.Now()
		c, cs, err := s.connect()
		if err == nil {
			readyAt := time.Now()
			s.ready(c, cs, readyAt.Sub(start))
			select {
			case <-c.Done():
			case <-s.quit:
			}
			if s.closing() {
				c.Close()
				s.stop()
				return
			}
			err = s.ended(c, cs)
			c.Close()
			healthy = time.Since(readyAt) >= b.ResetAfter
			if healthy {
				delay, failures = b.Initial, 0
			}
		}
		failures++
		he := asError(s.cfg.Name, err)
		permanent := he.Kind == KindConfig || he.Kind == KindAuth || cannotRun(he)
		if s.closing() {
			s.stop()
			return
		}
		if b.Disable || permanent || b.MaxAttempts > 0 && failures >= b.MaxAttempts {
			s.mu.Lock()
			s.c, s.cs = nil, nil
			s.setState(Failed, he)
			s.mu.Unlock()
			s.h.log.Warn("server failed", "server", s.cfg.Name, "error", he)
			return
		}
		switch {
		case healthy:
			// A crash after a healthy run (a tool that made it exit, say)
			// restarts it at once: backoff is for a server that keeps
			// crashing as it starts.
			s.h.log.Warn("server crashed", "server", s.cfg.Name, "error", he)
		case !s.backOff(he, delay):
			return
		default:
			delay = min(2*delay, b.Max)
		}
		s.mu.Lock()
		s.c, s.cs = nil, nil
		s.status.Restarts++
		s.setState(Starting, nil)
		s.mu.Unlock()
		s.h.log.Info("restarting server", "server", s.cfg.Name, "restarts", s.Status().Restarts)
	}
}

// backOff marks the server down for delay, then returns true; false
// when the host closes meanwhile (the server is then stopped).
func (s *Server) backOff(he *Error, delay time.Duration) bool {
	down := *he
	down.RetryAt = time.Now().Add(delay)
	s.mu.Lock()
	s.c, s.cs = nil, nil
	s.setState(Down, &down)
	s.status.RetryAt = down.RetryAt
	s.mu.Unlock()
	s.h.log.Warn("server down", "server", s.cfg.Name, "error", he, "restart_in", delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.quit:
		s.stop()
		return false
	}
}

// closing reports whether the server is being stopped, or its host.
func (s *Server) closing() bool {
	select {
	case <-s.quit:
		return true
	case <-s.h.closing:
		return true
	default:
		return false
	}
}

// shut stops the server's life; its process ends as at Host.Close.
func (s *Server) shut() { s.quitOnce.Do(func() { close(s.quit) }) }

// shutAndWait stops the server and waits until its life has ended.
func (s *Server) shutAndWait() {
	s.shut()
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if started {
		<-s.exited
	}
}

func (s *Server) stop() {
	s.mu.Lock()
	s.c, s.cs = nil, nil
	s.setState(Stopped, nil)
	s.mu.Unlock()
}

// ready records a successful start.
func (s *Server) ready(c *client.Client, cs *stdio.ClientStream, took time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c, s.cs = c, cs
	s.tools = nil
	s.toolsGen++
	s.status.Stateless = c.Stateless()
	s.status.Version = c.ProtocolVersion()
	s.status.Info = c.ServerInfo()
	s.status.ConnectTime = took
	s.status.Pid = 0
	if cs != nil {
		s.status.Pid = cs.Pid()
	}
	s.setState(Ready, nil)
	era := "legacy"
	if c.Stateless() {
		era = "stateless"
	}
	s.h.log.Info("connected", "server", s.cfg.Name, "era", era, "version", c.ProtocolVersion(),
		"server_info", c.ServerInfo().Name+" "+c.ServerInfo().Version, "took", took.Round(time.Microsecond))
}

// ended describes why a connection that was ready ended.
func (s *Server) ended(c *client.Client, cs *stdio.ClientStream) error {
	err := c.Err()
	if cs != nil {
		// Read saw the end of stdout; the exit status follows shortly.
		select {
		case <-cs.Done():
		case <-time.After(200 * time.Millisecond):
		}
		if exit := cs.ExitErr(); exit != nil {
			err = exit
		}
	}
	if err == nil {
		err = errors.New("the connection ended")
	}
	e := &Error{Server: s.cfg.Name, Kind: KindUnreachable, Err: fmt.Errorf("crashed: %w", err)}
	if cs != nil {
		e.Stderr = tail(cs.Stderr())
	}
	return e
}

// cannotRun reports whether a server failed because its program cannot
// be run at all (missing, not executable), which a restart will not fix.
func cannotRun(err error) bool {
	return errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission)
}

// asError makes err an *Error about the server.
func asError(server string, err error) *Error {
	var he *Error
	if errors.As(err, &he) {
		return he
	}
	kind := KindOf(err)
	if kind == 0 {
		kind = KindUnreachable
	}
	return &Error{Server: server, Kind: kind, Err: err}
}

// tail keeps the last lines of a stderr capture for messages.
func tail(s string) string {
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	s = strings.Join(lines, "\n")
	if len(s) > 2048 {
		s = "…" + s[len(s)-2048:]
	}
	return s
}
