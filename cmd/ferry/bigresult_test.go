package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunKeepsBigResults (issue 36, item 3): a result over the budget
// set in the configuration is kept whole in the state directory; the
// run says where, and --format json records it.
func TestRunKeepsBigResults(t *testing.T) {
	_, base := startFixture(t)
	state := t.TempDir()
	t.Setenv("FERRY_STATE_DIR", state)
	msg := strings.Repeat("0123456789", 50)
	cfg := agentConfig(t, `,"agent":{"resultTokens":{"ex__echo":20}}`)
	prompt := `call ex__echo {"message":"` + msg + `"}`
	code, out, errOut := runFerry(t, "", "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base,
		"--approval", "auto", "--format", "json", "-p", prompt)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var res struct {
		ToolCalls []struct {
			Cut  bool   `json:"cut"`
			Kept string `json:"kept"`
		} `json:"toolCalls"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.ToolCalls) != 1 {
		t.Fatalf("%v:\n%s", err, out)
	}
	c := res.ToolCalls[0]
	kept, err := os.ReadFile(c.Kept)
	if !c.Cut || filepath.Dir(c.Kept) != filepath.Join(state, "results") || err != nil || string(kept) != msg {
		t.Errorf("cut %v, kept %q: %q (%v)", c.Cut, c.Kept, kept, err)
	}
	code, _, errOut = runFerry(t, "", "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base,
		"--approval", "auto", "-v", "-p", prompt)
	if code != 0 || !strings.Contains(errOut, "the whole result is in "+filepath.Join(state, "results")) {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
