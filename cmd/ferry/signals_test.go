//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// TestSignalCleansUp interrupts a call in flight (issue 19, item 2):
// ferry exits with 128+signal after sending notifications/cancelled,
// stopping the server's whole process group (a grandchild too) and
// leaving its trace file whole.
func TestSignalCleansUp(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			pidFile, markFile, traceFile := filepath.Join(dir, "pid"), filepath.Join(dir, "mark"), filepath.Join(dir, "trace.ndjson")
			script := "sleep 321 & echo $! > " + pidFile + "; exec " + testBin
			cmd := exec.Command(ferryBin, "--trace-file", traceFile, "--format", "json", "call", "wait",
				"--env", "FERRY_TEST_SERVER=stdio", "--env", "FERRY_TEST_MARK="+markFile, "--", "sh", "-c", script)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the call to start", fileHas(markFile, "started"))
			b, _ := os.ReadFile(pidFile)
			grandchild, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("grandchild pid: %q", b)
			}
			defer syscall.Kill(grandchild, syscall.SIGKILL)
			cmd.Process.Signal(sig)
			cmd.Wait()
			if got, want := cmd.ProcessState.ExitCode(), 128+int(sig); got != want {
				t.Errorf("exit code %d (%v), want %d; stderr: %s", got, cmd.ProcessState, want, stderr.String())
			}
			if b, _ := os.ReadFile(markFile); !strings.Contains(string(b), "cancelled: cancelled by the peer") {
				t.Errorf("the server saw no notifications/cancelled: %q", b)
			}
			if processAlive(grandchild) {
				t.Errorf("the server's child %d outlived ferry", grandchild)
			}
			checkTrace(t, traceFile, "tools/call", "notifications/cancelled")
		})
	}
}

// TestSignalEndsHTTPSession interrupts a call to a Streamable HTTP server:
// the server sees the cancellation and the session's DELETE.
func TestSignalEndsHTTPSession(t *testing.T) {
	var mu sync.Mutex
	var marks []string
	mark := func(s string) { mu.Lock(); marks = append(marks, s); mu.Unlock() }
	has := func(s string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Contains(strings.Join(marks, "\n"), s)
		}
	}
	h := streamablehandler.New(testServer(mark), nil)
	defer h.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			mark("DELETE " + r.Header.Get("Mcp-Session-Id"))
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	traceFile := filepath.Join(t.TempDir(), "trace.ndjson")
	cmd := exec.Command(ferryBin, "--protocol", "2025-11-25", "--trace-file", traceFile, "call", "wait", srv.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, "the call to start", has("started"))
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if got := cmd.ProcessState.ExitCode(); got != 143 {
		t.Errorf("exit code %d (%v), want 143; stderr: %s", got, cmd.ProcessState, stderr.String())
	}
	waitFor(t, "the cancellation", has("cancelled: cancelled by the peer"))
	if !has("DELETE ")() {
		t.Errorf("no DELETE of the session: %q", marks)
	}
	// The Streamable HTTP client sends the cancellation itself, beside
	// the stream the trace observes: only the call is checked here.
	checkTrace(t, traceFile, "tools/call")
}

// checkTrace checks that every line of a trace file is a whole JSON
// object and that the methods appear.
func checkTrace(t *testing.T, path string, methods ...string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		t.Errorf("trace file does not end with a whole line: ...%q", b[max(0, len(b)-80):])
	}
	seen := map[string]bool{}
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		var l struct{ Method string }
		if err := json.Unmarshal(line, &l); err != nil {
			t.Errorf("trace line %d: %v: %q", i+1, err, line)
		}
		seen[l.Method] = true
	}
	for _, m := range methods {
		if !seen[m] {
			t.Errorf("trace file has no %s", m)
		}
	}
}

// processAlive reports whether pid runs (a zombie does not count: its
// parent, maybe init, has yet to reap it).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc (macOS): the signal reached it
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}
