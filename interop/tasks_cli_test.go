package interop

// A task survives its client: one ferry process starts a task on a
// server and is interrupted (Ctrl-C, no terminal to ask on: the task is
// left running), another ferry process fetches the task's result by its
// id. Both eras: the tasks extension (2026-07-28) and the experimental
// tasks of 2025-11-25; the server is ferry's, over Streamable HTTP and
// over WebSocket.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
	"github.com/ferrymcp/ferry/websocket"
)

func TestTaskSurvivesItsClient(t *testing.T) {
	bin := ferryBinary(t)
	s := taskFixtureServer()
	defer s.Close()
	hh := streamablehandler.New(s, nil)
	hts := httptest.NewServer(hh)
	defer hts.Close()
	defer hh.Close()
	wsh := websocket.NewHandler(s, nil)
	wts := httptest.NewServer(wsh)
	defer wts.Close()
	defer wsh.Close()
	for _, tc := range []struct{ name, url, protocol string }{
		{"stateless-http", hts.URL, "2026-07-28"},
		{"2025-11-25-http", hts.URL, "2025-11-25"},
		{"stateless-ws", "ws" + strings.TrimPrefix(wts.URL, "http"), "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			// First process: start the task, interrupt once it runs.
			first := exec.CommandContext(ctx, bin, "call", "--task", "--protocol", tc.protocol, "--format", "json", tc.url, "slow", "ms=1500")
			stderr, err := first.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout bytes.Buffer
			first.Stdout = &stdout
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			idRe := regexp.MustCompile(`task ([0-9a-f]{32}) working`)
			sc := bufio.NewScanner(stderr)
			var id string
			var seen []string
			for sc.Scan() {
				seen = append(seen, sc.Text())
				if m := idRe.FindStringSubmatch(sc.Text()); m != nil {
					id = m[1]
					break
				}
			}
			if id == "" {
				first.Process.Kill()
				first.Wait()
				t.Fatalf("no task id from the first process: %q", seen)
			}
			first.Process.Signal(syscall.SIGINT)
			rest, _ := io.ReadAll(stderr)
			werr := first.Wait()
			if !strings.Contains(string(rest), "left running") || werr == nil {
				t.Fatalf("first process after Ctrl-C: %v\nstderr: %s\nstdout: %s", werr, rest, stdout.Bytes())
			}
			// Second process: the result, by the task's id.
			out, err := exec.CommandContext(ctx, bin, "tasks", "--wait", "--protocol", tc.protocol, tc.url, id).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "slept") {
				t.Fatalf("second process: %v\n%s", err, out)
			}
			t.Logf("task %s: started by one ferry process, interrupted and left running; its result fetched by another: %q", id, lastLine(string(out)))
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// A cancelled task is reported the same way in both eras: exit 5 and
// stdout empty, as for a failed one (2025-11-25 exited 5 and the tasks
// extension 0 before, with the task on stdout).
func TestCancelledTaskExitCode(t *testing.T) {
	bin := ferryBinary(t)
	s := taskFixtureServer()
	defer s.Close()
	hh := streamablehandler.New(s, nil)
	hts := httptest.NewServer(hh)
	defer hts.Close()
	defer hh.Close()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c, err := client.Connect(ctx, &streamable.Transport{URL: hts.URL}, &client.Options{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var task *protocol.DetailedTask
			_, err = c.Call(ctx, "slow", map[string]any{"ms": 20000}, client.AsTask(&client.TaskOptions{Detach: true,
				WaitOptions: client.WaitOptions{OnStatus: func(t *protocol.DetailedTask) { task = t }}}))
			if err != nil || task == nil {
				t.Fatalf("AsTask: %v, task %v", err, task)
			}
			if err := c.CancelTask(ctx, task.TaskID); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, bin, "tasks", "--protocol", version, hts.URL, task.TaskID)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err = cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 5 || stdout.Len() > 0 || !strings.Contains(stderr.String(), "cancelled") {
				t.Fatalf("ferry tasks of a cancelled task: %v\nstdout: %s\nstderr: %s", err, stdout.Bytes(), stderr.Bytes())
			}
			t.Logf("%s: exit %d, %q", version, ee.ExitCode(), strings.TrimSpace(stdout.String()+stderr.String()))
		})
	}
}
