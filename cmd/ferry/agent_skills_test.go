package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/agent"
)

// skillsConfig writes a configuration with one server, docs, publishing
// the skills of skillsDir over Streamable HTTP.
func skillsConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.json")
	cfg := fmt.Sprintf(`{"mcpServers":{"docs":{"url":%q}}}`, skillsServer(t, nil))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// toolMessages are the contents of the tool results the model was sent.
func (f *chatFixture) toolMessages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, req := range f.requests {
		msgs, _ := req["messages"].([]any)
		if len(msgs) == 0 {
			continue
		}
		if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] == "tool" {
			content, _ := last["content"].(string)
			out = append(out, content)
		}
	}
	return out
}

// loadToolDescription is the description of skills__load in the first
// request the model was sent.
func (f *chatFixture) loadToolDescription() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		return ""
	}
	b, _ := json.Marshal(f.requests[0]["tools"])
	var tools []struct {
		Function struct{ Name, Description string }
	}
	json.Unmarshal(b, &tools)
	for _, t := range tools {
		if t.Function.Name == "skills__load" {
			return t.Function.Description
		}
	}
	return ""
}

// TestRunSkill: ferry run without a terminal to ask refuses to load a
// skill (exit 7, said on stderr) unless --approval auto, which loads it.
func TestRunSkill(t *testing.T) {
	cfg := skillsConfig(t)
	prompt := `call skills__load {"server":"docs","skill":"pdf-processing"}`
	tests := []struct {
		approval string
		code     int
		answer   string
	}{
		{"ask", exitNotApproved, "not run: skill loads need the user's approval and there is no terminal to ask"},
		{"auto", 0, "Read `references/FORMS.md` for the form fields"},
	}
	for _, tt := range tests {
		t.Run(tt.approval, func(t *testing.T) {
			_, base := startFixture(t)
			code, out, errOut := runFerry(t, "", "run", "--config", cfg, "--model", "openai/fixture", "--base-url", base,
				"--approval", tt.approval, "-p", prompt)
			if code != tt.code || !strings.Contains(out, tt.answer) {
				t.Errorf("--approval %s: exit %d (want %d), stdout:\n%s\nstderr:\n%s", tt.approval, code, tt.code, out, errOut)
			}
			if tt.code == exitNotApproved && !strings.Contains(errOut, "skills__load needs approval and there is no terminal to ask") {
				t.Errorf("stderr does not say why:\n%s", errOut)
			}
		})
	}
}

// TestSkillApprovalAnswers: "always" loads a skill for the session only
// when its files have digests to bind the approval to, and never grants
// a skill's allowed-tools beyond this once.
func TestSkillApprovalAnswers(t *testing.T) {
	tests := []struct {
		name   string
		skill  agent.SkillQuestion
		answer string
		want   agent.Answer
	}{
		{"always, a skill with a manifest", agent.SkillQuestion{Name: "s", Files: 2}, "a", agent.AllowSession},
		{"always, a dynamic skill", agent.SkillQuestion{Name: "s", Dynamic: true}, "a", agent.AllowOnce},
		{"always, a grant", agent.SkillQuestion{Name: "s", AllowedTools: []string{"echo"}}, "always", agent.AllowOnce},
		{"yes", agent.SkillQuestion{Name: "s"}, "y", agent.AllowOnce},
		{"anything else", agent.SkillQuestion{Name: "s"}, "sure", agent.Refuse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &agent.Question{Server: "docs", Name: "s", Skill: &tt.skill}
			var w strings.Builder
			got, err := askApproval(context.Background(), &w, func(context.Context) (string, error) { return tt.answer, nil }, "m", q)
			if err != nil || got != tt.want {
				t.Errorf("answer %q: %v, %v; want %v\n%s", tt.answer, got, err, tt.want, w.String())
			}
			if tt.skill.AllowedTools != nil && !strings.Contains(w.String(), `asks that these tools of "docs" run without asking (allowed-tools):`) {
				t.Errorf("the grant's question:\n%s", w.String())
			}
		})
	}
}
