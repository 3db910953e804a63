package stdio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// Defaults of [Command], as its fields document them.
const (
	// defaultStderrBytes keeps enough of stderr for a stack trace.
	defaultStderrBytes = 64 << 10
	// defaultCloseTimeout leaves a well-behaved server time to finish.
	defaultCloseTimeout = 2 * time.Second
	// defaultTermTimeout leaves a server time to clean up after SIGTERM.
	defaultTermTimeout = 2 * time.Second
)

// Command describes how to launch an MCP server as a subprocess, the
// client side of the stdio transport. The zero value of every field but
// Path is usable.
type Command struct {
	// Path is the program to run; a name without a slash is looked up in
	// this process's PATH.
	Path string
	// Args are the arguments, without the program name.
	Args []string
	// Env holds the variables meant for the server, set on top of the
	// few it gets from this process (see the package documentation).
	Env map[string]string
	// InheritEnv gives the server this process's whole environment (Env
	// still on top) instead of the few default variables. Whatever
	// secrets it holds (API keys, tokens, OTLP headers) then reach the
	// server, and whatever the server runs.
	InheritEnv bool
	// Dir is the working directory; empty means this process's.
	Dir string
	// Limits bound the messages accepted from the server.
	Limits jsonrpc.Limits
	// StderrBytes is how much of the end of the server's stderr is kept
	// for [ClientStream.Stderr] and exit errors; default 64 KiB, enough
	// for a stack trace.
	StderrBytes int
	// CloseTimeout is how long Close waits for the server to exit by
	// itself once its stdin is closed, before sending SIGTERM to its
	// process group; default 2 seconds.
	CloseTimeout time.Duration
	// TermTimeout is how long Close waits after SIGTERM before sending
	// SIGKILL; default 2 seconds.
	TermTimeout time.Duration
	// Logger receives the lines skipped on the server's stdout because
	// they are not JSON (banners of wrapper scripts): the first few, then
	// how many more, at most every few seconds. Nil discards them.
	Logger *slog.Logger
	// Stderr, when set, also receives the server's stderr, line by line,
	// as it arrives (a CLI shows it to its user). It must not block for
	// long: the server stalls while it does.
	Stderr io.Writer
}

// ErrInvalidCommand is wrapped by the error of [Command.Connect] for a
// command the system cannot run as given, which no retry will mend: a
// NUL byte in the program, an argument or the environment, an
// environment variable whose name is empty or holds '=', arguments and
// environment beyond the system's limit.
var ErrInvalidCommand = errors.New("invalid command")

// check refuses what exec would fail on, naming it.
func (c *Command) check() error {
	bad := func(what string) error {
		return fmt.Errorf("stdio: cannot start the server %q: %w: %s", c.Path, ErrInvalidCommand, what)
	}
	if strings.IndexByte(c.Path, 0) >= 0 || strings.IndexByte(c.Dir, 0) >= 0 {
		return bad("the program or its folder holds a NUL byte")
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return bad(fmt.Sprintf("argument %d holds a NUL byte", i+1))
		}
	}
	for k, v := range c.Env {
		switch {
		case k == "" || strings.ContainsAny(k, "=\x00"):
			return bad(fmt.Sprintf("%q is not an environment variable name", k))
		case strings.IndexByte(v, 0) >= 0:
			return bad(fmt.Sprintf("the value of %s holds a NUL byte", k))
		}
	}
	return nil
}

// Connect starts the server and returns the stream to talk to it.
//
// ctx bounds the start only: the server runs until [ClientStream.Close]
// (or until it exits), because a server killed by a request's deadline
// would take every later request with it. The server runs in a process
// group of its own, so that Close also stops what it started (a wrapper
// such as npx starts the real server as a child); on Linux it is also
// killed if this process dies.
func (c *Command) Connect(ctx context.Context) (*ClientStream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.Dir != "" {
		// Otherwise the error would blame the program.
		if fi, err := os.Stat(c.Dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = errors.New("not a directory")
			}
			return nil, fmt.Errorf("stdio: cannot start the server %s: working directory: %w", c.Path, err)
		}
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.environ()
	setSysProcAttr(cmd)

	var files []*os.File // every end we created, closed on failure
	pipe := func() (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll(files)
		return nil, fmt.Errorf("stdio: starting %s: %w", c.Path, err)
	}
	growPipe(inW)
	growPipe(outR)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(files)
		if errors.Is(err, syscall.E2BIG) {
			// No retry helps: the command line is too long for the system.
			return nil, fmt.Errorf("stdio: cannot start the server %q: %w: its arguments and environment exceed the system's limit", c.Path, ErrInvalidCommand)
		}
		return nil, fmt.Errorf("stdio: cannot start the server: %w", err)
	}
	// The child has its copies; ours would keep its stdin open and hide
	// the end of its output.
	closeAll([]*os.File{inR, outW, errW})

	s := &ClientStream{
		cmd:          cmd,
		stdin:        inW,
		stdout:       outR,
		stderrPipe:   errR,
		w:            newLineWriter(inW),
		stderr:       newRing(positive(c.StderrBytes, defaultStderrBytes)),
		copyStderr:   c.Stderr,
		closeTimeout: positive(c.CloseTimeout, defaultCloseTimeout),
		termTimeout:  positive(c.TermTimeout, defaultTermTimeout),
		goneWait:     goneWait,
		done:         make(chan struct{}),
		stderrDone:   make(chan struct{}),
		stdoutEOF:    make(chan struct{}),
		waited:       make(chan struct{}),
		closing:      make(chan struct{}),
		strays:       newStrays(cmd.Process.Pid, inW, outR, errR),
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.noise = &noise{log: log, pid: cmd.Process.Pid}
	s.out = &stdoutReader{f: outR}
	s.lr = newLineReader(s.out, c.Limits)
	s.lr.lend = &lender{} // see ClientStream.Recycle
	s.lr.nonJSON = s.noise.skip
	s.wg.Add(2)
	go s.wait()
	go s.drainStderr()
	return s, nil
}

// environ returns the child's environment (see the package
// documentation).
func (c *Command) environ() []string {
	return environment(os.Environ(), c.Env, c.InheritEnv, runtime.GOOS)
}

func positive[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Open is [Command.Connect] returning the stream as a [jsonrpc.Stream], so
// that a Command is a client transport (client.Transport).
func (c *Command) Open(ctx context.Context) (jsonrpc.Stream, error) {
	s, err := c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return s, nil
}
