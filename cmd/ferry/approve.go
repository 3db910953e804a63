package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/protocol"
)

// lineReader reads the user's answer to a question; ctx cancelled (Ctrl-C
// during the question) gives up.
type lineReader func(ctx context.Context) (string, error)

// The bytes of a question's arguments and texts shown at first; the
// details key shows the rest, and the question says how much that is.
const (
	argumentsPreview = 200
	systemPreview    = 200
	messagePreview   = 300
)

// question is what an approval question shows: a summary, and on the
// details key everything it left out, so that nothing is approved unseen.
type question struct {
	summary, details, prompt string
}

// askApproval asks the user about a tool call or a sampling request on w,
// the tool's annotations shaping the question: a read-only tool may be
// allowed for the rest of the session, a destructive one is flagged.
// "d" shows the request whole and asks again.
func askApproval(ctx context.Context, w io.Writer, read lineReader, model string, q *agent.Question) (agent.Answer, error) {
	view := toolQuestion(q)
	if q.Sampling != nil {
		view = samplingQuestion(model, q.Server, q.Sampling)
	}
	io.WriteString(w, view.summary)
	for {
		fmt.Fprintf(w, "  %s: ", view.prompt)
		line, err := read(ctx)
		if err != nil {
			fmt.Fprintln(w)
			return agent.Refuse, err
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		if answer != "d" && answer != "details" {
			return decide(answer, q), nil
		}
		io.WriteString(w, view.details)
	}
}

// decide turns the user's answer into the decision; anything but yes or
// always refuses.
func decide(answer string, q *agent.Question) agent.Answer {
	switch answer {
	case "y", "yes":
		return agent.AllowOnce
	case "a", "always":
		if q.ReadOnly && q.Sampling == nil {
			return agent.AllowSession
		}
		return agent.AllowOnce
	}
	return agent.Refuse
}

// toolQuestion asks about a tool call: its arguments as JSON on one line,
// cut at argumentsPreview bytes, whole and indented on the details key.
func toolQuestion(q *agent.Question) question {
	args := compactJSON(q.Arguments)
	shown, hidden := head(args, argumentsPreview)
	var b strings.Builder
	fmt.Fprintf(&b, "  ? %s.%s %s%s\n", safeLine(q.Server), safeLine(q.Tool), safeLine(shown), ellipsis(hidden))
	writeHidden(&b, hidden, "of the arguments")
	fmt.Fprintf(&b, "    %s\n", toolNotes(q))
	prompt := "Run it? [y]es / [n]o"
	if q.ReadOnly {
		prompt = "Run it? [y]es / [a]lways for this session / [n]o"
	}
	details := fmt.Sprintf("    arguments, %s bytes:\n%s", groupDigits(len(args)), indentLines(safe(indentedJSON(q.Arguments)), "      "))
	return question{summary: b.String(), details: details, prompt: withDetails(prompt, hidden)}
}

// toolNotes says what the tool's annotations say it does.
func toolNotes(q *agent.Question) string {
	var notes []string
	switch {
	case q.ReadOnly:
		notes = append(notes, "read-only")
	case q.Destructive:
		notes = append(notes, "⚠ may delete or overwrite (destructive)")
	default:
		notes = append(notes, "changes things (not read-only)")
	}
	if q.OpenWorld {
		notes = append(notes, "reaches outside this machine (open world)")
	}
	return strings.Join(notes, "; ")
}

// samplingQuestion asks about what a server asks the model: its system
// prompt and messages, each cut on one line, whole on the details key.
func samplingQuestion(model, server string, p *protocol.CreateMessageParams) question {
	var sum, all strings.Builder
	fmt.Fprintf(&sum, "  ? server %q asks the model (sampling, up to %d tokens", safeLine(server), p.MaxTokens)
	if len(p.Tools) > 0 {
		fmt.Fprintf(&sum, ", with %d tools of its own", len(p.Tools))
		fmt.Fprintf(&all, "    tools: %s\n", safeLine(samplingToolNames(p.Tools)))
	}
	fmt.Fprintln(&sum, "):")
	hidden := 0
	if p.SystemPrompt != "" {
		hidden += writeText(&sum, &all, "system", p.SystemPrompt, systemPreview)
	}
	for _, m := range p.Messages {
		hidden += writeText(&sum, &all, string(m.Role), messageText(m.Content), messagePreview)
	}
	writeHidden(&sum, hidden, "of the request")
	prompt := fmt.Sprintf("Answer it with %s? [y]es / [n]o", model)
	return question{summary: sum.String(), details: all.String(), prompt: withDetails(prompt, hidden)}
}

// writeText writes text labelled on one line of sum, cut at n bytes, and
// whole on all; it returns the bytes the cut leaves out.
func writeText(sum, all *strings.Builder, label, text string, n int) int {
	shown, hidden := head(text, n)
	fmt.Fprintf(sum, "    %s: %s%s\n", safeLine(label), safeLine(strings.Join(strings.Fields(shown), " ")), ellipsis(hidden))
	fmt.Fprintf(all, "    %s:\n%s", safeLine(label), indentLines(safe(text), "      "))
	return hidden
}

// messageText is a sampling message's text, other kinds of content named.
func messageText(content []protocol.Content) string {
	var parts []string
	for _, c := range content {
		switch c.Type {
		case protocol.ContentText:
			parts = append(parts, c.Text)
		default:
			parts = append(parts, "["+c.Type+"]")
		}
	}
	return strings.Join(parts, " ")
}

func samplingToolNames(tools []protocol.Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// writeHidden says how many bytes a question's summary leaves out, and
// how to see them, before the user answers.
func writeHidden(w io.Writer, hidden int, of string) {
	if hidden > 0 {
		fmt.Fprintf(w, "    … %s more bytes %s not shown; [d]etails shows all of it\n", groupDigits(hidden), of)
	}
}

func withDetails(prompt string, hidden int) string {
	if hidden > 0 {
		return prompt + " / [d]etails"
	}
	return prompt
}

func ellipsis(hidden int) string {
	if hidden > 0 {
		return "…"
	}
	return ""
}

// head is s cut to at most n bytes on a rune boundary, and the number of
// bytes it leaves out.
func head(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], len(s) - n
}

// groupDigits writes n (not negative) with a comma every three digits:
// 3,412.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// indentLines puts prefix before every line of s, and ends it with a
// newline.
func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+prefix) + "\n"
}

// compactJSON is v without insignificant whitespace: one line, its strings
// exact (which whitespace collapsing would not keep); v as it is when it
// is not JSON.
func compactJSON(v jsontext.Value) string {
	c := jsontext.Value(append([]byte(nil), v...))
	if c.Compact() != nil {
		return string(v)
	}
	return string(c)
}

// indentedJSON is v indented, for reading; v as it is when it is not JSON.
func indentedJSON(v jsontext.Value) string {
	c := jsontext.Value(append([]byte(nil), v...))
	if c.Indent(jsontext.WithIndent("  ")) != nil {
		return string(v)
	}
	return string(c)
}

// oneLineJSON is JSON on one line, cut to n bytes.
func oneLineJSON(v jsontext.Value, n int) string {
	c := jsontext.Value(append([]byte(nil), v...))
	if c.Compact() != nil {
		c = v
	}
	return cutLine(string(c), n)
}

// cutLine puts s on one line of at most n bytes.
func cutLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
