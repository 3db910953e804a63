package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/protocol"
)

// lineReader reads the user's answer to a question; ctx cancelled (Ctrl-C
// during the question) gives up.
type lineReader func(ctx context.Context) (string, error)

// askApproval asks the user about a tool call or a sampling request on w,
// the tool's annotations shaping the question: a read-only tool may be
// allowed for the rest of the session, a destructive one is flagged.
func askApproval(ctx context.Context, w io.Writer, read lineReader, model string, q *agent.Question) (agent.Answer, error) {
	if q.Sampling != nil {
		describeSampling(w, q.Server, model, q.Sampling)
		fmt.Fprintf(w, "  Answer it with %s? [y]es / [n]o: ", model)
	} else {
		fmt.Fprintf(w, "  ? %s.%s %s\n", safeLine(q.Server), safeLine(q.Tool), safeLine(oneLineJSON(q.Arguments, 200)))
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
		fmt.Fprintf(w, "    %s\n", strings.Join(notes, "; "))
		if q.ReadOnly {
			fmt.Fprint(w, "  Run it? [y]es / [a]lways for this session / [n]o: ")
		} else {
			fmt.Fprint(w, "  Run it? [y]es / [n]o: ")
		}
	}
	line, err := read(ctx)
	if err != nil {
		fmt.Fprintln(w)
		return agent.Refuse, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return agent.AllowOnce, nil
	case "a", "always":
		if q.ReadOnly && q.Sampling == nil {
			return agent.AllowSession, nil
		}
		return agent.AllowOnce, nil
	}
	return agent.Refuse, nil
}

// describeSampling shows what a server asks the model.
func describeSampling(w io.Writer, server, model string, p *protocol.CreateMessageParams) {
	fmt.Fprintf(w, "  ? server %q asks the model (sampling, up to %d tokens", safeLine(server), p.MaxTokens)
	if len(p.Tools) > 0 {
		fmt.Fprintf(w, ", with %d tools of its own", len(p.Tools))
	}
	fmt.Fprintln(w, "):")
	if p.SystemPrompt != "" {
		fmt.Fprintf(w, "    system: %s\n", safeLine(cutLine(p.SystemPrompt, 200)))
	}
	for _, m := range p.Messages {
		var parts []string
		for _, c := range m.Content {
			switch c.Type {
			case protocol.ContentText:
				parts = append(parts, c.Text)
			default:
				parts = append(parts, "["+c.Type+"]")
			}
		}
		fmt.Fprintf(w, "    %s: %s\n", safeLine(string(m.Role)), safeLine(cutLine(strings.Join(parts, " "), 300)))
	}
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
