//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ttyChat is ferry chat at a real terminal: a pane of a tmux server of
// the test's own (its own socket and no user configuration), driven with
// send-keys and read with capture-pane.
type ttyChat struct {
	t    *testing.T
	sock string
}

// startTTYChat runs ferry chat with args in a tmux pane of 100×30 cells.
// The test is skipped when tmux is not installed.
func startTTYChat(t *testing.T, model http.Handler, args ...string) *ttyChat {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install -y tmux): the chat's terminal tests need a real terminal")
	}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	conf := filepath.Join(dir, "tmux.conf")
	// remain-on-exit keeps the pane after ferry ends, for its exit status.
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 2000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &ttyChat{t: t, sock: filepath.Join(dir, "sock")}
	cmd := append([]string{"-S", c.sock, "-f", conf, "new-session", "-d", "-x", "100", "-y", "30",
		"-e", "FERRY_STATE_DIR=" + filepath.Join(dir, "state"), "-e", "NO_COLOR=1",
		ferryBin, "chat", "--model", "openai/fixture", "--base-url", srv.URL + "/v1"}, args...)
	if out, err := exec.Command(tmux, cmd...).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command(tmux, "-S", c.sock, "kill-server").Run() })
	c.waitFor("the prompt", func(s string) bool { return strings.Contains(s, "› ") })
	return c
}

func (c *ttyChat) tmux(args ...string) string {
	c.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", c.sock}, args...)...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// typeText types text literally; keys presses keys by tmux's names
// (C-c, C-d, Enter).
func (c *ttyChat) typeText(text string) { c.t.Helper(); c.tmux("send-keys", "-l", text) }
func (c *ttyChat) keys(keys ...string) {
	c.t.Helper()
	c.tmux(append([]string{"send-keys"}, keys...)...)
}

// screen is what the pane shows, its scrollback too.
func (c *ttyChat) screen() string {
	c.t.Helper()
	return c.tmux("capture-pane", "-p", "-J", "-S", "-200")
}

// waitFor waits up to 10 s for the screen to satisfy cond.
func (c *ttyChat) waitFor(what string, cond func(screen string) bool) string {
	c.t.Helper()
	var s string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s = c.screen(); cond(s) {
			return s
		}
	}
	c.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, s)
	return ""
}

func (c *ttyChat) waitText(text string) string {
	c.t.Helper()
	return c.waitFor(text, func(s string) bool { return strings.Contains(s, text) })
}

// exited reports whether ferry has ended, and its exit status.
// exited reports whether ferry has ended and how: its exit status, or
// "signal N". tmux marks the pane dead when the terminal closes, which
// can come before it has reaped the process and learned how it ended:
// until it knows, the pane counts as alive.
func (c *ttyChat) exited() (bool, string) {
	c.t.Helper()
	out := c.tmux("display-message", "-p", "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_pid}")
	f := strings.Split(strings.TrimSpace(out), "|")
	if len(f) != 4 {
		return false, ""
	}
	switch {
	case f[0] == "1" && f[1] != "":
		return true, f[1]
	case f[0] == "1" && f[2] != "":
		return true, "signal " + f[2]
	}
	return zombie(f[3])
}

// zombie reports how the process pid ended when it has ended and is
// not reaped yet, from Linux's /proc (its stat's last field, exit_code,
// in waitpid's form). tmux can leave its pane's process unreaped for
// seconds after it exited, or mark the pane dead before it knows the
// status; the process's own record is the one to read then.
func zombie(pid string) (bool, string) {
	stat, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false, ""
	}
	_, rest, ok := strings.Cut(string(stat), ") ") // the command may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 2 || f[0] != "Z" {
		return false, ""
	}
	code, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return false, ""
	}
	if sig := code & 0x7f; sig != 0 {
		return true, "signal " + strconv.Itoa(sig)
	}
	return true, strconv.Itoa(code >> 8)
}

func (c *ttyChat) waitExit() string {
	c.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if dead, status := c.exited(); dead {
			return status
		}
	}
	c.t.Fatalf("ferry did not exit; the screen:\n%s", c.screen())
	return ""
}

// TestChatTTYCtrlC: Ctrl-C at the prompt clears the line being typed
// and the chat goes on; a second Ctrl-C on the empty line leaves, as
// Ctrl-D does.
func TestChatTTYCtrlC(t *testing.T) {
	c := startTTYChat(t, &chatFixture{}, "--config", agentConfig(t, ""))
	c.typeText("half typed")
	c.waitText("› half typed")
	c.keys("C-c")
	c.waitText("Ctrl-C again")
	if dead, status := c.exited(); dead {
		t.Fatalf("one Ctrl-C ended the chat (status %s):\n%s", status, c.screen())
	}
	c.typeText("hello")
	c.keys("Enter")
	s := c.waitText("you said: hello (1 messages)")
	if strings.Contains(s, "half typed hello") || strings.Contains(s, "you said: half") {
		t.Errorf("the line Ctrl-C cleared was sent:\n%s", s)
	}
	c.keys("C-c")
	c.waitText("Ctrl-C again")
	c.keys("C-c")
	if status := c.waitExit(); status != "0" {
		t.Errorf("two Ctrl-C: exit status %s, want 0", status)
	}
}

// gatedModel answers "slow" in two pieces, each sent when the test opens
// its gate, and anything else as chatFixture does.
type gatedModel struct {
	chatFixture
	gates [2]chan struct{}
}

func newGatedModel() *gatedModel {
	return &gatedModel{gates: [2]chan struct{}{make(chan struct{}), make(chan struct{})}}
}

func (g *gatedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct{ Messages []struct{ Content any } }
	json.Unmarshal(body, &req)
	if n := len(req.Messages); n == 0 || req.Messages[n-1].Content != "slow" {
		r.Body = io.NopCloser(bytes.NewReader(body))
		g.chatFixture.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i, piece := range []string{"part one, ", "part two"} {
		select {
		case <-g.gates[i]:
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
			return
		}
		b, _ := json.Marshal(piece)
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fixture\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":%s},\"finish_reason\":null}]}\n\n", b)
		w.(http.Flusher).Flush()
	}
	io.WriteString(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fixture\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
}

// TestChatTTYWhileAnswering: a spinner with the time shows while the
// model has yet to answer, and what is typed while the answer streams
// is not echoed into it but held for the next prompt.
func TestChatTTYWhileAnswering(t *testing.T) {
	m := newGatedModel()
	c := startTTYChat(t, m, "--config", agentConfig(t, ""))
	c.typeText("slow")
	c.keys("Enter")
	spinner := regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] working · \d+\.\d s`)
	c.waitFor("the spinner", spinner.MatchString)
	close(m.gates[0])
	c.waitText("part one, ")
	c.typeText("typed ahead")
	close(m.gates[1])
	s := c.waitFor("the answer's end and the next prompt", func(s string) bool {
		return strings.Contains(s, "part two") && strings.Contains(s, "· 1 step ·") && strings.Contains(s, "› typed ahead")
	})
	if n := strings.Count(s, "typed ahead"); n != 1 || spinner.MatchString(s) {
		t.Errorf("the keys typed during the answer show %d times (want once, at the prompt), or the spinner stayed:\n%s", n, s)
	}
	c.keys("Enter")
	c.waitText("you said: typed ahead (3 messages)")
}

// TestChatTTYCtrlCAtApproval: Ctrl-C at an approval question stops the
// turn; the call is refused as the user's answer, not reported as a
// question never asked, and the chat goes on.
func TestChatTTYCtrlCAtApproval(t *testing.T) {
	c := startTTYChat(t, &chatFixture{}, "--config", agentConfig(t, ""), "--approval", "ask")
	c.typeText(`call ex__echo {"message":"hi"}`)
	c.keys("Enter")
	c.waitText("Run it?")
	c.keys("C-c")
	s := c.waitText("turn stopped (Ctrl-C)")
	if strings.Contains(s, "not asked") || !strings.Contains(s, "not run: the user denied it") {
		t.Errorf("Ctrl-C at the question:\n%s", s)
	}
	c.typeText("hello")
	c.keys("Enter")
	c.waitText("you said: hello")
}
