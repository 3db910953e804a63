//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatTTYPermissions: /permissions shows the approval of each server
// and tool and sets one, kept for the project; the call it forbids is
// refused unasked; and a tool is written one way everywhere, SERVER__TOOL
// as /tools, the model and the allow lists write it (issue 36, items 5
// and 6). At b211c63 there was no /permissions and the question and the
// call lines wrote ex.echo.
func TestChatTTYPermissions(t *testing.T) {
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config) // the tmux server, and so ferry, inherit it
	c := startTTYChat(t, &chatFixture{}, "--config", agentConfig(t, ""), "--approval", "ask")

	c.typeText(`call ex__echo {"message":"hi"}`)
	c.keys("Enter")
	c.waitText(`? ex__echo {"message":"hi"}`)
	c.typeText("y")
	c.keys("Enter")
	c.waitText("done: hi")

	c.typeText("/permissions")
	c.keys("Enter")
	s := c.waitText("ex__add ")
	t.Logf("the screen:\n%s", s)
	for _, want := range []string{"approval ask · permissions kept for", "ex__echo (read-only)", "- (approval ask decides)"} {
		if !strings.Contains(s, want) {
			t.Errorf("/permissions lacks %q:\n%s", want, s)
		}
	}

	c.typeText("/permissions ex__nope never")
	c.keys("Enter")
	c.waitText(`! no server or tool named "ex__nope"`)
	c.typeText("/permissions ex__add never")
	c.keys("Enter")
	c.waitText("(ex__add: never, kept for ")

	c.typeText(`call ex__add {"a":1,"b":2}`)
	c.keys("Enter")
	s = c.waitText("done: Error: not run: the user's permissions for this project say never for ex__add")
	if n := strings.Count(s, "Run it?"); n != 1 {
		t.Errorf("asked %d times, want once (ex__echo, not ex__add set to never):\n%s", n, s)
	}
	if !strings.Contains(s, "✗ ex__add not run") || !strings.Contains(s, "← ex__echo") || strings.Contains(s, "ex.echo") || strings.Contains(s, "ex.add") {
		t.Errorf("tool names written another way than SERVER__TOOL:\n%s", s)
	}

	kept, err := os.ReadFile(filepath.Join(config, "ferry", "permissions"))
	wd, _ := os.Getwd()
	if want := canonicalDir(wd) + "\tex__add\tnever\n"; err != nil || string(kept) != want {
		t.Errorf("kept %q (%v), want %q", kept, err, want)
	}

	c.typeText("/permissions ex__add default")
	c.keys("Enter")
	c.waitText("(ex__add: default, kept for ")
	if kept, _ := os.ReadFile(filepath.Join(config, "ferry", "permissions")); strings.Contains(string(kept), "ex__add") {
		t.Errorf("default left %q", kept)
	}
}
