//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// newsModel is chatFixture, answering the first line of the user's
// message and keeping the user's messages whole, to see what ferry told
// the model besides.
type newsModel struct {
	chatFixture
	mu   sync.Mutex
	user []string
}

func (m *newsModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	json.Unmarshal(body, &req)
	msgs, _ := req["messages"].([]any)
	if n := len(msgs); n > 0 {
		last, _ := msgs[n-1].(map[string]any)
		if text, ok := last["content"].(string); ok && last["role"] == "user" {
			m.mu.Lock()
			m.user = append(m.user, text)
			m.mu.Unlock()
			last["content"], _, _ = strings.Cut(text, "\n")
			body, _ = json.Marshal(req)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.chatFixture.ServeHTTP(w, r)
}

func (m *newsModel) lastUser() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.user) == 0 {
		return ""
	}
	return m.user[len(m.user)-1]
}

// TestChatTTYServersComeAndGo: in one conversation at a terminal, a
// server added to the configuration starts at /reload, one removed
// stops at SIGHUP, and one that crashes is restarted with its tools
// listed again; the screen and the model are told which tools appeared
// or went away, and the conversation goes on (issue 36, item 2; at
// b211c63 /reload was an unknown command and SIGHUP ended the chat).
func TestChatTTYServersComeAndGo(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	write := func(names ...string) {
		var entries []string
		for _, n := range names {
			entries = append(entries, fmt.Sprintf(`%q:{"command":%q}`, n, exampleServer))
		}
		if err := os.WriteFile(cfg, []byte(`{"mcpServers":{`+strings.Join(entries, ",")+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ex")
	m := &newsModel{}
	c := startTTYChat(t, m, "--config", cfg, "--approval", "auto")

	// Added: /reload starts it; the model hears of its tools.
	write("ex", "two")
	c.typeText("/reload")
	c.keys("Enter")
	c.waitText("(configuration read again: started two)")
	c.waitText("+two__echo")
	c.typeText(`call two__echo {"message":"hi"}`)
	c.keys("Enter")
	c.waitText("done: hi")
	if u := m.lastUser(); !strings.Contains(u, "[ferry: the tools changed since the last message; now available: ") || !strings.Contains(u, "two__echo") {
		t.Errorf("the model was not told of the new tools: %q", u)
	}

	// Removed: SIGHUP at the prompt, with a line half typed, which stays.
	write("two")
	c.typeText("half")
	pid, _ := strconv.Atoi(strings.TrimSpace(c.tmux("display-message", "-p", "#{pane_pid}")))
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	c.waitText("(configuration read again: stopped ex)")
	s := c.waitText("−ex__echo")
	if !strings.HasSuffix(strings.TrimRight(s, "\n "), "› half") {
		t.Errorf("the half-typed line is not at the prompt after the reload:\n%s", s)
	}
	c.keys("C-u") // drop "half"
	c.typeText(`call ex__echo {"message":"gone"}`)
	c.keys("Enter")
	c.waitFor("the call to the removed server's tool", func(s string) bool { return strings.Count(s, "done: ") == 2 })
	if u := m.lastUser(); !strings.Contains(u, "no longer available: ") || !strings.Contains(u, "ex__echo") {
		t.Errorf("the model was not told of the tools gone: %q", u)
	}

	// Crashed: killed, restarted, its tools listed again.
	c.typeText("/servers")
	c.keys("Enter")
	pidLine := regexp.MustCompile(`(?m)^  two\s+ready .* pid (\d+)`)
	serverPid, _ := strconv.Atoi(pidLine.FindStringSubmatch(c.waitFor("two's pid", pidLine.MatchString))[1])
	if err := syscall.Kill(serverPid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	restarted := regexp.MustCompile(`(?m)^  two\s+ready .*\(restarted 1×\)`)
	for i := 2; !restarted.MatchString(c.screen()); i++ {
		if i > 100 {
			t.Fatalf("two was not restarted:\n%s", c.screen())
		}
		c.typeText("/servers")
		c.keys("Enter")
		c.waitFor("/servers again", func(s string) bool { return len(regexp.MustCompile(`(?m)^  two\s`).FindAllString(s, -1)) >= i })
	}
	c.typeText(`call two__echo {"message":"back"}`)
	c.keys("Enter")
	c.waitText("(server two stopped and was restarted, 1× in all; its tools were listed again)")
	c.waitText("done: back")
	c.typeText("still here?")
	c.keys("Enter")
	s = c.waitText("you said: still here? (")
	t.Logf("the screen:\n%s", s)
	if n := strings.Count(s, "· 1 step") + strings.Count(s, "· 2 steps"); n != 4 {
		t.Errorf("%d turns on the screen, want 4:\n%s", n, s)
	}
	if err := exec.Command("kill", "-0", strconv.Itoa(serverPid)).Run(); err == nil {
		t.Errorf("the killed server %d still runs", serverPid)
	}
}
