package host

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/transport/stdio"
)

var (
	exampleOnce sync.Once
	exampleBin  string
	exampleErr  error
)

// exampleServer builds ferry's example server (examples/everything) once.
func exampleServer(t *testing.T) string {
	t.Helper()
	exampleOnce.Do(func() {
		dir, err := filepath.Abs(filepath.Join("..", "examples", "everything"))
		if err != nil {
			exampleErr = err
			return
		}
		out := filepath.Join(tempDir, "everything")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			exampleErr = err
			t.Logf("%s", b)
			return
		}
		exampleBin = out
	})
	if exampleErr != nil {
		t.Fatalf("building the example server: %v", exampleErr)
	}
	return exampleBin
}

// TestStdioCrashRestart: ferry's example server, killed, is restarted as
// a new process; while down, calls fail at once with its exit status.
func TestStdioCrashRestart(t *testing.T) {
	bin := exampleServer(t)
	h, err := New([]*config.Server{{Name: "everything", Transport: config.Stdio, Command: bin}},
		&Options{Restart: Backoff{Initial: 300 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, _ := h.Server("everything")
	st := s.Status()
	if st.State != Ready || st.Pid == 0 || st.Info.Name != "ferry-everything" {
		t.Fatalf("status %+v", st)
	}
	tools, err := h.Tools(t.Context())
	if err != nil || len(tools) < 9 || !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == "everything__echo" }) {
		t.Fatalf("tools: %v %d", err, len(tools))
	}
	syscall.Kill(st.Pid, syscall.SIGKILL)
	deadline := time.Now().Add(5 * time.Second)
	for s.Status().State == Ready && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	down := s.Status()
	if down.State != Down || !strings.Contains(down.Err.Error(), "signal: killed") {
		t.Fatalf("after kill: %v %v", down.State, down.Err)
	}
	start := time.Now()
	_, err = h.Call(t.Context(), "everything__echo", map[string]string{"message": "x"})
	if KindOf(err) != KindUnreachable || time.Since(start) > 50*time.Millisecond {
		t.Errorf("call while down: %v after %v", err, time.Since(start))
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for s.Status().State != Ready && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	up := s.Status()
	if up.State != Ready || up.Pid == st.Pid || up.Restarts != 1 {
		t.Fatalf("after restart: %+v", up)
	}
	res, err := h.Call(t.Context(), "everything__echo", map[string]string{"message": "again"})
	if err != nil || res.Content[0].Text != "again" {
		t.Errorf("call after restart: %v %+v", err, res)
	}
}

// TestStdioStartFailure: a server that exits at once fails with its exit
// status and stderr; a missing program says so.
func TestStdioStartFailure(t *testing.T) {
	h, err := New([]*config.Server{
		{Name: "exits", Transport: config.Stdio, Command: "sh", Args: []string{"-c", "echo 'fatal: no API key' >&2; exit 3"}},
		{Name: "missing", Transport: config.Stdio, Command: "/nonexistent/ferry-test-server"},
	}, &Options{Restart: Backoff{Disable: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	err = h.Start(t.Context())
	exits, _ := h.Server("exits")
	st := exits.Status()
	if st.State != Failed || KindOf(st.Err) != KindUnreachable || !strings.Contains(st.Err.Error(), "exit status 3") ||
		!strings.Contains(st.Err.Error(), "fatal: no API key") {
		t.Errorf("exits: %v %v", st.State, st.Err)
	}
	missing, _ := h.Server("missing")
	if st := missing.Status(); st.State != Failed || !strings.Contains(st.Err.Error(), "no such file") {
		t.Errorf("missing: %v %v", st.State, st.Err)
	}
	if err == nil {
		t.Error("Start succeeded")
	}
}

// TestStdioNoiseExplained: a server that prints on stdout what is not
// JSON and never answers fails with an error that says so and quotes its
// first line, escaped, whether it times out or exits (issue 31: it said
// "context deadline exceeded" and nothing else). The servers that exit
// are seen to exit before the handshake is written: the write fails, and
// what they wrote is then read only if the client's reading worker gets
// to it before the stream closes (the hint was lost when it did not).
func TestStdioNoiseExplained(t *testing.T) {
	const script = `printf '\033[31mServer listening on stdio\nready\n'; `
	h, err := New([]*config.Server{
		{Name: "hangs", Transport: config.Stdio, Command: "sh", Args: []string{"-c", script + "exec sleep 60"}},
		{Name: "exits", Transport: config.Stdio, Command: "sh", Args: []string{"-c", script + "exit 0"}},
		{Name: "quiet", Transport: config.Stdio, Command: "sh", Args: []string{"-c", "exit 4"}},
	}, &Options{ConnectTimeout: 500 * time.Millisecond, Restart: Backoff{Disable: true},
		Transport: func(ctx context.Context, cfg *config.Server) (jsonrpc.Stream, error) {
			cs, err := (&stdio.Command{Path: cfg.Command, Args: cfg.Args}).Connect(ctx)
			if err != nil {
				return nil, err
			}
			if cfg.Name != "hangs" {
				<-cs.Done()
			}
			return cs, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	h.Start(t.Context())
	const hint = `the server wrote 2 lines that are not JSON on stdout, which is for JSON-RPC messages; the first: "\x1b[31mServer listening on stdio"`
	for name, kind := range map[string]ErrorKind{"hangs": KindTimeout, "exits": KindUnreachable, "quiet": KindUnreachable} {
		s, _ := h.Server(name)
		st := s.Status()
		if st.Err == nil || KindOf(st.Err) != kind || strings.Contains(st.Err.Error(), hint) != (name != "quiet") {
			t.Errorf("%s: %v (kind %v), want kind %v and the hint only when the server wrote noise", name, st.Err, KindOf(st.Err), kind)
		}
	}
}
