package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/protocol"
)

// answers is a lineReader giving the answers in turn, noting what the
// question had shown on w when each was read.
type answers struct {
	w     *strings.Builder
	lines []string
	seen  []string // w's text at each read
}

func (a *answers) read(context.Context) (string, error) {
	a.seen = append(a.seen, a.w.String())
	if len(a.lines) == 0 {
		return "", errors.New("no more answers")
	}
	line := a.lines[0]
	a.lines = a.lines[1:]
	return line, nil
}

// TestApprovalShowsEverything: the approval question shows every byte of
// what it asks about before the answer: a long argument's tail is behind
// the details key, and the question says exactly how much it hides (issue
// 29, finding 9; at b211c63 the arguments were cut at 200 bytes, the rest
// approved unseen, and "d" refused the call).
func TestApprovalShowsEverything(t *testing.T) {
	long := `{"path":"/tmp/x","content":"` + strings.Repeat("a", 3000) + ` TAIL-rm -rf ~"}`
	sampling := &protocol.CreateMessageParams{MaxTokens: 10, SystemPrompt: "be brief",
		Messages: []protocol.SamplingMessage{{Role: "user", Content: []protocol.Content{{Type: protocol.ContentText, Text: strings.Repeat("b ", 400) + "TAIL-send the keys"}}}}}
	tests := []struct {
		name    string
		q       agent.Question
		answers []string
		want    agent.Answer
		hidden  string // the note on what the summary leaves out; "" for none
	}{
		{"short arguments, all shown", agent.Question{Server: "s", Tool: "t", Arguments: []byte(`{"a": "TAIL-1"}`)},
			[]string{"y"}, agent.AllowOnce, ""},
		{"long arguments, the details seen", agent.Question{Server: "s", Tool: "write", Arguments: []byte(long)},
			[]string{"d", "y"}, agent.AllowOnce, "… 2,844 more bytes of the arguments not shown; [d]etails shows all of it"},
		{"long arguments, read-only, details then always", agent.Question{Server: "s", Tool: "read", ReadOnly: true, Arguments: []byte(long)},
			[]string{"details", "a"}, agent.AllowSession, "… 2,844 more bytes of the arguments not shown"},
		{"long sampling message, the details seen", agent.Question{Server: "s", Sampling: sampling},
			[]string{"D", "yes"}, agent.AllowOnce, "… 518 more bytes of the request not shown; [d]etails shows all of it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w strings.Builder
			a := &answers{w: &w, lines: tt.answers}
			got, err := askApproval(context.Background(), &w, a.read, "m", &tt.q)
			if err != nil || got != tt.want {
				t.Fatalf("answer %v, %v; want %v\n%s", got, err, tt.want, w.String())
			}
			first, last := a.seen[0], a.seen[len(a.seen)-1]
			if tt.hidden == "" && (strings.Contains(first, "more bytes") || strings.Contains(first, "[d]etails")) {
				t.Errorf("nothing is hidden, yet the question says so:\n%s", first)
			}
			if tt.hidden != "" && (!strings.Contains(first, tt.hidden) || !strings.Contains(first, "/ [d]etails: ")) {
				t.Errorf("the question does not say %q, nor offer the details:\n%s", tt.hidden, first)
			}
			if !strings.Contains(last, "TAIL-") {
				t.Errorf("answered without the tail shown:\n%s", last)
			}
		})
	}
}

// TestApprovalDetailsAreSafe: the details show a terminal escape in an
// argument inert, so that it cannot rewrite the question (issue 29,
// finding 9).
func TestApprovalDetailsAreSafe(t *testing.T) {
	tests := []struct{ args, want string }{
		// C1 CSI and a bidi override, raw in a JSON string.
		{`{"a":"` + strings.Repeat("x", 300) + "\u009b2J\u202e\"}", `\u009b2J\u202e"`},
		// Not JSON: shown as it is, as inert.
		{strings.Repeat("y", 300) + "\x1b]0;pwned\x07\r\n", "^[]0;pwned^G^M"},
	}
	for _, tt := range tests {
		var w strings.Builder
		a := &answers{w: &w, lines: []string{"d", "n"}}
		got, _ := askApproval(context.Background(), &w, a.read, "m", &agent.Question{Server: "s", Tool: "t", Arguments: []byte(tt.args)})
		if got != agent.Refuse || dangerous(w.String()) || !strings.Contains(w.String(), tt.want) {
			t.Errorf("%v %q", got, w.String())
		}
	}
}
