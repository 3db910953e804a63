//go:build unix

package main

import (
	"strings"
	"testing"
)

// TestChatTTYSkill: at a terminal, the model is told the server's skills,
// asks for one, the user approves its load at the question, and the
// skill's text reaches the model; then a file of it, verified. A skill
// the user refuses does not reach the model.
func TestChatTTYSkill(t *testing.T) {
	model := &chatFixture{}
	c := startTTYChat(t, model, "--config", skillsConfig(t), "--approval", "ask")
	c.typeText(`call skills__load {"server":"docs","skill":"pdf-processing"}`)
	c.keys("Enter")
	s := c.waitText("Load it? [y]es / [a]lways for this session / [n]o")
	t.Logf("the question:\n%s", s)
	for _, want := range []string{`? load skill "pdf-processing" of server "docs" into the conversation: Extract, fill, and assemble PDF documents`,
		"3 files,", "skill://pdf-processing/SKILL.md"} {
		if !strings.Contains(s, want) {
			t.Errorf("the question lacks %q:\n%s", want, s)
		}
	}
	c.typeText("y")
	c.keys("Enter")
	s = c.waitText("· 2 steps ·")
	t.Logf("after the approval:\n%s", s)
	if desc := model.loadToolDescription(); !strings.Contains(desc, "- docs: pdf-processing: Extract, fill, and assemble PDF documents") ||
		!strings.Contains(desc, "- docs: refunds: ") {
		t.Errorf("the model was not told the server's skills:\n%s", desc)
	}
	results := model.toolMessages()
	if len(results) != 1 || !strings.Contains(results[0], `[skill "pdf-processing" of server "docs"`) ||
		!strings.Contains(results[0], "Read `references/FORMS.md` for the form fields") {
		t.Fatalf("the skill's text did not reach the model: %q", results)
	}

	c.typeText(`call skills__read {"server":"docs","skill":"pdf-processing","path":"references/FORMS.md"}`)
	c.keys("Enter")
	c.waitFor("the file's answer", func(s string) bool { return strings.Count(s, "· 2 steps ·") == 2 })
	if results = model.toolMessages(); len(results) != 2 || !strings.Contains(results[1], "Fill every field named in the form's AcroForm dictionary.") {
		t.Fatalf("the skill's file did not reach the model: %q", results)
	}

	c.typeText(`call skills__load {"server":"docs","skill":"refunds"}`)
	c.keys("Enter")
	c.waitText(`? load skill "refunds" of server "docs"`)
	c.typeText("n")
	c.keys("Enter")
	c.waitFor("the refusal's answer", func(s string) bool { return strings.Count(s, "· 2 steps ·") == 3 })
	if results = model.toolMessages(); len(results) != 3 || !strings.Contains(results[2], "not run: the user denied it") {
		t.Fatalf("the refused skill: %q", results)
	}
}
