//go:build unix

package stdio

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json/jsontext"
)

func connect(t *testing.T, c *Command) *ClientStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return s
}

func TestClientEcho(t *testing.T) {
	defer checkGoroutines(t)()
	s := connect(t, helperCommand("echo"))
	ctx := context.Background()
	c := jsonrpc2.NewConn(ctx, s, nil)
	r, err := c.Call(ctx, "echo", jsontext.Value(`{"hello":"world"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(r.Result) != `{"hello":"world"}` {
		t.Errorf("got %s", r.Result)
	}
	c.Close() // closes s, and the server exits on EOF
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if err := s.ExitErr(); err != nil {
		t.Errorf("ExitErr: %v, want a clean exit", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Read(); err != jsonrpc.ErrClosed {
		t.Errorf("Read after Close: %v", err)
	}
}

func TestClientServerDiesMidCall(t *testing.T) {
	defer checkGoroutines(t)()
	s := connect(t, helperCommand("die"))
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := jsonrpc2.NewConn(ctx, s, nil)
	defer c.Close()
	start := time.Now()
	_, err := c.Call(ctx, "tools/call", jsontext.Value(`{}`))
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call failed after %v", d)
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("call: %v, want an *ExitError", err)
	}
	if ee.Code != 3 || ee.Status != "exit status 3" {
		t.Errorf("exit code %d, status %q", ee.Code, ee.Status)
	}
	want := "server process exited (exit status 3); stderr: starting up\nfatal: the database is on fire"
	if ee.Error() != want {
		t.Errorf("error %q\nwant %q", ee.Error(), want)
	}
	if !strings.Contains(err.Error(), "fatal: the database is on fire") {
		t.Errorf("the call's error does not tell the stderr: %v", err)
	}
	if err := s.ExitErr(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("ExitErr: %v", err)
	}
}

func TestClientBannerSkipped(t *testing.T) {
	defer checkGoroutines(t)()
	var logs syncBuffer
	cmd := helperCommand("banner")
	cmd.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	s := connect(t, cmd)
	defer s.Close()
	c := jsonrpc2.NewConn(context.Background(), s, nil)
	defer c.Close()
	if _, err := c.Call(context.Background(), "echo", jsontext.Value(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := logs.String(); !strings.Contains(got, "level=WARN") ||
		!strings.Contains(got, `line="Starting the example server v1.2.3 ..."`) {
		t.Errorf("log: %s", got)
	}
}

func TestClientEnvAndDir(t *testing.T) {
	defer checkGoroutines(t)()
	dir := t.TempDir()
	cmd := helperCommand("echo")
	cmd.Env["FERRY_TEST_VAR"] = "over"
	cmd.Dir = dir
	t.Setenv("FERRY_TEST_VAR", "under")
	s := connect(t, cmd)
	defer s.Close()
	ctx := context.Background()
	c := jsonrpc2.NewConn(ctx, s, nil)
	defer c.Close()
	var env map[string]string
	if err := c.CallResult(ctx, "env", []string{"PATH", "FERRY_TEST_VAR"}, &env); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"PATH": os.Getenv("PATH"), "FERRY_TEST_VAR": "over"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	var cwd string
	if err := c.CallResult(ctx, "cwd", nil, &cwd); err != nil {
		t.Fatal(err)
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	if gotDir, _ := filepath.EvalSymlinks(cwd); gotDir != wantDir {
		t.Errorf("working directory %q, want %q", cwd, dir)
	}
}

func TestClientCannotStart(t *testing.T) {
	for _, c := range []*Command{
		{Path: "ferry-no-such-command"},
		{Path: "/nonexistent/server"},
		{Path: os.Args[0], Dir: "/nonexistent"},
	} {
		s, err := c.Connect(context.Background())
		if err == nil {
			s.Close()
			t.Errorf("%s: started", c.Path)
			continue
		}
		if !strings.Contains(err.Error(), "cannot start the server") {
			t.Errorf("%s: %v", c.Path, err)
		}
		t.Log(err)
	}
	if err := (&Command{Path: "ferry-no-such-command"}).connectErr(); !strings.Contains(err, `exec: "ferry-no-such-command": executable file not found in $PATH`) {
		t.Errorf("error %q does not name the command", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := helperCommand("echo").Connect(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Connect with a cancelled context: %v", err)
	}
}

func (c *Command) connectErr() string {
	s, err := c.Connect(context.Background())
	if err == nil {
		s.Close()
		return ""
	}
	return err.Error()
}

// A wrapper script whose child outlives it: Close must stop both.
func TestClientKillsGrandchildren(t *testing.T) {
	defer checkGoroutines(t)()
	lines := make(lineCollector, 16)
	s := connect(t, &Command{
		Path:   "/bin/sh",
		Args:   []string{"-c", `sleep 1000 & echo "grandchild $!" >&2; while read line; do :; done`},
		Stderr: lines,
	})
	pid, err := strconv.Atoi(strings.TrimPrefix(waitLine(t, lines, "grandchild"), "grandchild "))
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatalf("grandchild %d not running", pid)
	}
	start := time.Now()
	s.Close()
	if alive(pid) {
		t.Errorf("grandchild %d still running after Close", pid)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
}

// A server that ignores both the end of its input and SIGTERM.
func TestClientKillsStubbornServer(t *testing.T) {
	defer checkGoroutines(t)()
	lines := make(lineCollector, 16)
	s := connect(t, &Command{
		Path:         "/bin/sh",
		Args:         []string{"-c", `trap "" TERM; echo ready >&2; while :; do sleep 1; done`},
		CloseTimeout: 50 * time.Millisecond,
		TermTimeout:  50 * time.Millisecond,
		Stderr:       lines,
	})
	waitLine(t, lines, "ready") // the trap is set
	start := time.Now()
	s.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	var ee *ExitError
	if err := s.ExitErr(); !errors.As(err, &ee) || ee.Status != "signal: killed" {
		t.Errorf("ExitErr: %v, want killed", err)
	}
	if alive(s.Pid()) {
		t.Errorf("server %d still running", s.Pid())
	}
}

// When the server exits but a process it started keeps its stdout open,
// Read must not wait for that one.
func TestClientServerExitsStdoutHeld(t *testing.T) {
	defer checkGoroutines(t)()
	lines := make(lineCollector, 16)
	s := connect(t, &Command{
		Path:   "/bin/sh",
		Args:   []string{"-c", `read line; sleep 1000 & echo "bye" >&2; exit 5`},
		Stderr: lines,
	})
	defer s.Close()
	c := jsonrpc2.NewConn(context.Background(), s, nil)
	defer c.Close()
	start := time.Now()
	_, err := c.Call(context.Background(), "ping", nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 5 || ee.Stderr != "bye" {
		t.Fatalf("call: %v, want exit status 5 with stderr", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call failed after %v", d)
	}
}

func TestClientStderrTail(t *testing.T) {
	defer checkGoroutines(t)()
	s := connect(t, &Command{
		Path:        "/bin/sh",
		Args:        []string{"-c", `i=0; while [ $i -lt 2000 ]; do echo "line $i" >&2; i=$((i+1)); done`},
		StderrBytes: 1000,
	})
	defer s.Close()
	_, err := s.Read()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != -1 && ee.Code != 0 {
		t.Fatalf("Read: %v", err)
	}
	<-s.Done()
	s.Close()
	got := s.Stderr()
	if len(got) != 1000 || !strings.HasSuffix(got, "line 1998\nline 1999\n") {
		t.Errorf("Stderr() = %d bytes ending %q", len(got), got[max(0, len(got)-30):])
	}
	if s.ExitErr() != nil {
		t.Errorf("ExitErr: %v", s.ExitErr())
	}
}

// TestClientWriteToExitedServer: a write that finds the server gone
// fails with the same *ExitError as a read, exit status and stderr tail
// included, whether the server is still being reaped when the write
// fails (once a bare "broken pipe") or its stderr is still being
// drained (once an ExitError without the tail).
func TestClientWriteToExitedServer(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		waitDone     bool
	}{
		// stdin closed, then a word on stderr, then the exit a moment
		// later: the write fails before the server is reaped.
		{"before reaped", `exec 0<&-; echo "fatal: no API key" >&2; sleep 0.03; exit 3`, false},
		// A child keeps stderr open and writes on it after the server
		// exited: the write comes after the reaping, before the tail.
		{"before stderr ends", `exec 0<&-; (sleep 0.03; echo "fatal: no API key" >&2) & exit 3`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer checkGoroutines(t)()
			lines := make(lineCollector, 16)
			s := connect(t, &Command{Path: "/bin/sh", Args: []string{"-c", tc.script}, Stderr: lines})
			defer s.Close()
			// What is waited for comes 30 ms late: on a loaded machine,
			// later than the 100 ms the stream waits at most.
			s.goneWait = 10 * time.Second
			if tc.waitDone {
				<-s.Done()
			} else {
				waitLine(t, lines, "fatal")
			}
			err := s.Write(context.Background(), &jsonrpc.Message{Method: "ping", ID: jsonrpc.Int64ID(1)})
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(ee.Stderr, "fatal: no API key") {
				t.Fatalf("Write: %v (%T), want *ExitError with exit status 3 and the stderr tail", err, err)
			}
		})
	}
}

// alive reports whether pid runs (a zombie waiting to be reaped by
// someone else does not count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) state ...
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A Read cut short by InterruptRead returns jsonrpc.ErrReadInterrupted and
// loses nothing: the next Read returns the message whose first half had
// come. An interrupt with no Read in progress cuts the next one short.
// Once the stream is closed, Read reports that, whatever was interrupted.
func TestClientInterruptRead(t *testing.T) {
	defer checkGoroutines(t)()
	s := connect(t, helperCommand("halves"))
	ctx := context.Background()
	if err := s.Write(ctx, &jsonrpc.Message{ID: jsonrpc.Int64ID(1), Method: "m"}); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, s.InterruptRead) // between the halves
	start := time.Now()
	if _, err := s.Read(); err != jsonrpc.ErrReadInterrupted {
		t.Fatalf("Read: %v, want ErrReadInterrupted", err)
	}
	if d := time.Since(start); d > 90*time.Millisecond {
		t.Errorf("interrupted after %v", d)
	}
	m, err := s.Read()
	if err != nil || m.ID != jsonrpc.Int64ID(1) || string(m.Result) != `{"slow":true}` {
		t.Fatalf("Read after the interrupt: %v %v", m, err)
	}
	s.InterruptRead()
	if _, err := s.Read(); err != jsonrpc.ErrReadInterrupted {
		t.Fatalf("Read after an interrupt with none in progress: %v", err)
	}
	s.Write(ctx, &jsonrpc.Message{ID: jsonrpc.Int64ID(2), Method: "m"})
	if m, err := s.Read(); err != nil || m.ID != jsonrpc.Int64ID(2) {
		t.Fatalf("Read: %v %v", m, err)
	}
	s.InterruptRead()
	s.Close()
	if _, err := s.Read(); err != jsonrpc.ErrClosed {
		t.Errorf("Read after Close: %v", err)
	}
}

// A client connection reads its answers on the calling goroutine
// (jsonrpc's CallerReads): a call whose time is up while it reads returns
// then, and the calls after it are answered.
func TestClientCallerReadsTimeout(t *testing.T) {
	defer checkGoroutines(t)()
	s := connect(t, helperCommand("halves"))
	ctx := context.Background()
	c := jsonrpc2.NewConn(ctx, s, &jsonrpc2.ConnOptions{CallerReads: true})
	defer c.Close()
	errSlow := errors.New("too slow")
	for i := range 3 {
		r, err := jsonrpc2.Call(c, ctx, "m", nil, &jsonrpcapi.CallOptions{Timeout: 5 * time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }})
		if err != nil || string(r.Result) != `{"slow":true}` {
			t.Fatalf("call %d: %v %v", i, r, err)
		}
	}
	start := time.Now()
	if _, err := jsonrpc2.Call(c, ctx, "m", nil, &jsonrpcapi.CallOptions{Timeout: 50 * time.Millisecond, TimeoutErr: func(string, time.Duration) error { return errSlow }}); err != errSlow {
		t.Fatalf("short call: %v, want the timeout", err)
	}
	if d := time.Since(start); d > 90*time.Millisecond {
		t.Errorf("timed out after %v", d)
	}
	for i := range 2 {
		r, err := jsonrpc2.Call(c, ctx, "m", nil, &jsonrpcapi.CallOptions{Timeout: 5 * time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }})
		if err != nil || string(r.Result) != `{"slow":true}` {
			t.Fatalf("call %d after the timeout: %v %v", i, r, err)
		}
	}
}
