package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// bigText is about n bytes of numbered lines, each with a character of
// two bytes, so that a page can only start and end well on characters.
func bigText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d: café au lait, the quick brown fox jumps over the lazy dog\n", i)
	}
	return b.String()
}

// bigServer has a tool whose result is text of size bytes and an image
// larger than the budget of a result's text.
func bigServer(text string, png []byte) *server.Server {
	s := newServer("srv")
	s.AddTool(&protocol.Tool{Name: "dump", InputSchema: jsontext.Value(`{"type":"object"}`)},
		func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(text), protocol.ImageContent(png, "image/png")}}, nil
		})
	return s
}

var keptAs = regexp.MustCompile(`kept as "([^"]+)"`)

// TestBigResultIsKeptAndPaged: a 2 MB result through a real server: the
// model is given its head and its tail with a note, the image whole; the
// file holds the whole result; the model pages through it.
func TestBigResultIsKeptAndPaged(t *testing.T) {
	whole := bigText(2 << 20)
	png := append([]byte("\x89PNG"), bytes.Repeat([]byte{7}, 100<<10)...)
	h := startHost(t, map[string]*server.Server{"srv": bigServer(whole, png)}, nil)
	var id string
	var offsets []int
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		switch n {
		case 1:
			return calls(ToolCall{ID: "c1", Name: "srv__dump", Arguments: `{}`}), nil
		case 2:
			note := lastResults(t, *req)[0].Content[2].Text
			if m := keptAs.FindStringSubmatch(note); m != nil {
				id = m[1]
			}
			midChar := 40_000 + strings.Index(whole[40_000:], "é") + 1
			offsets = []int{40_000, midChar, len(whole) - 10}
			var cs []ToolCall
			for i, off := range offsets {
				cs = append(cs, ToolCall{ID: fmt.Sprint("r", i), Name: ResultReadTool, Arguments: fmt.Sprintf(`{"id":%q,"offset":%d,"tokens":100}`, id, off)})
			}
			cs = append(cs, ToolCall{ID: "r-all", Name: ResultReadTool, Arguments: fmt.Sprintf(`{"id":%q}`, id)})
			return calls(cs...), nil
		}
		return say("done"), nil
	}}
	dir := t.TempDir()
	a := &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}, ResultDir: dir}
	res, err := a.Run(context.Background(), Text("go"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}

	// What the model received: head, tail, the image whole, the note.
	got := lastResults(t, reqs[1])[0].Content
	if len(got) != 3 || got[1].Type != ImagePart || !bytes.Equal(got[1].Data, png) {
		t.Fatalf("the model got %d parts, the second %s; want the text, the image whole, the note", len(got), got[1].Type)
	}
	head, tail, ok := strings.Cut(got[0].Text, "\n\n[ferry: ")
	tail = tail[strings.Index(tail, "]\n\n")+3:]
	budget := DefaultMaxResultTokens * bytesPerToken
	if !ok || !strings.HasPrefix(whole, head) || !strings.HasSuffix(whole, tail) || len(head) < budget/2 || len(tail) < budget/5 {
		t.Errorf("head %d bytes, tail %d bytes: not the head and the tail of the result", len(head), len(tail))
	}
	if n := len(got[0].Text) + len(got[2].Text); n > budget {
		t.Errorf("the model got %d bytes of text, over the budget of %d", n, budget)
	}
	note := got[2].Text
	for _, w := range []string{fmt.Sprintf("this result is %d bytes", len(whole)), "over the budget of 8000 tokens", ResultReadTool} {
		if !strings.Contains(note, w) {
			t.Errorf("the note lacks %q: %s", w, note)
		}
	}
	t.Logf("the model received: %d bytes of head, %d of tail, a %d-byte image, and the note:\n%s", len(head), len(tail), len(png), note)

	// The file kept holds the whole result, for the user only.
	path := filepath.Join(dir, id+".txt")
	kept, err := os.ReadFile(path)
	if err != nil || string(kept) != whole {
		t.Fatalf("the file %s holds %d bytes (%v), want the %d of the result", path, len(kept), err, len(whole))
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("the file's mode is %v", fi.Mode())
	}
	if c := res.Calls[0]; !c.Cut || c.Kept != path {
		t.Errorf("the call's record: cut %v, kept %q, want %s", c.Cut, c.Kept, path)
	}
	if !hasTool(reqs[1].Tools, ResultReadTool) || hasTool(reqs[0].Tools, ResultReadTool) {
		t.Errorf("%s is to be offered once a result is kept, not before", ResultReadTool)
	}

	// The pages are the right slices, on characters' bounds.
	pages := lastResults(t, reqs[2])
	for i, off := range offsets {
		hdr, text, _ := strings.Cut(resultText(pages[i]), "]\n")
		from := off
		for from < len(whole) && whole[from]&0xC0 == 0x80 {
			from++ // a page starts on a character
		}
		want := whole[from:min(from+400, len(whole))]
		if text != want || !strings.Contains(hdr, fmt.Sprintf("bytes %d to %d of %d", from, from+len(want), len(whole))) {
			t.Errorf("page at %d: %q\n%q; want %d bytes from %d", off, hdr, truncate(text, 80), len(want), from)
		}
	}
	if !strings.Contains(resultText(pages[2]), "this is its end") {
		t.Errorf("the last page does not say it is the end: %s", resultText(pages[2]))
	}
	if _, text, _ := strings.Cut(resultText(pages[3]), "]\n"); len(text) > budget || len(text) < budget-300 || !strings.HasPrefix(whole, text) {
		t.Errorf("a page without a size: %d bytes, want the budget", len(text))
	}
	t.Logf("the model paged: %s", strings.SplitN(resultText(pages[0]), "\n", 2)[0])
}

func hasTool(specs []ToolSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// TestResultBudgets: the budget of a result is in tokens, the tool's own
// before its server's before the default, which an eighth of a small
// context lowers.
func TestResultBudgets(t *testing.T) {
	rec := &CallRecord{Name: "srv__dump", Server: "srv"}
	tests := []struct {
		name string
		lim  Limits
		want int
	}{
		{"default", Limits{}, DefaultMaxResultTokens},
		{"small context", Limits{ContextTokens: 16_000}, 2000},
		{"set", Limits{MaxResultTokens: 500}, 500},
		{"in bytes, as before", Limits{MaxResultBytes: 1000}, 250},
		{"none", Limits{MaxResultTokens: -1}, -1},
		{"the server's", Limits{ResultTokens: map[string]int{"srv": 20_000}}, 20_000},
		{"the tool's before its server's", Limits{ResultTokens: map[string]int{"srv": 20_000, "srv__dump": 50_000}}, 50_000},
		{"another tool's", Limits{ResultTokens: map[string]int{"srv__other": 50_000}}, DefaultMaxResultTokens},
	}
	for _, tt := range tests {
		if got := tt.lim.withDefaults().resultTokens(rec); got != tt.want {
			t.Errorf("%s: %d tokens, want %d", tt.name, got, tt.want)
		}
	}
}

// TestResultReadRefusesBadInput: ids are names in the directory, not
// paths; offsets are not negative.
func TestResultReadRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := &Agent{ResultDir: dir}
	for _, args := range []string{`{"id":"../secret"}`, `{"id":"x","offset":-1}`, `{"id":"missing"}`, `{"id":7}`, `{"id":""}`} {
		res, err := a.readResult(jsontext.Value(args), 100)
		if err == nil {
			t.Errorf("%s: read %+v", args, res)
		}
	}
}

// TestBudgetSettings: the budgets of results, per server and per tool,
// and the thresholds of tool search are settings of the configuration.
func TestBudgetSettings(t *testing.T) {
	s, err := parseSettings("c.json", []byte(`{"maxResultTokens":4000,"resultTokens":{"srv":20000,"srv__dump":50000},
	  "toolSearch":{"tools":30,"tokens":5000}}`), &config.DefaultOptions().Vars)
	if err != nil {
		t.Fatal(err)
	}
	merged := (&Settings{ResultTokens: map[string]int{"srv": 1000}}).Merge(s)
	lim := merged.Limits().withDefaults()
	rec := func(name string) *CallRecord { return &CallRecord{Name: "srv__" + name, Server: "srv"} }
	if lim.resultTokens(rec("dump")) != 50_000 || lim.resultTokens(rec("other")) != 1000 ||
		lim.resultTokens(&CallRecord{Name: "x__y", Server: "x"}) != 4000 || lim.ToolSearchTools != 30 || lim.ToolSearchTokens != 5000 {
		t.Errorf("limits %+v", lim)
	}
	if _, err := parseSettings("c.json", []byte(`{"toolSearch":{"tool":3}}`), nil); err == nil || !strings.Contains(err.Error(), `"agent.toolSearch.tool"`) {
		t.Errorf("a wrong key: %v", err)
	}
}
