package config

import "testing"

func TestParseKeepsTheAgentSettings(t *testing.T) {
	data := []byte(`{
	  // ferry's agent keeps its settings next to the servers
	  "mcpServers": {"a": {"command": "x"}},
	  "agent": {"model": "openai/gpt-4o", /* a comment */ "approval": "ask",},
	}`)
	f, err := Parse("/tmp/c.json", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(f.Agent)
	want := `{"model": "openai/gpt-4o",                 "approval": "ask" }`
	if got != want {
		t.Errorf("Members[agent] = %q, want %q", got, want)
	}
}
