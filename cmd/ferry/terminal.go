package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ferrymcp/ferry/protocol"
)

// terminal serializes what goes to stderr: diagnostics, the progress bar
// (redrawn in place when stderr is a terminal) and elicitation prompts.
type terminal struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool // stderr is a terminal: draw the progress bar
	ask bool // stdin is a terminal: ask elicitations
	in  *bufio.Reader
	// prompts is where questions go: stderr, or the terminal itself
	// (/dev/tty) when stderr is piped (2>&1 | tee log) but stdin is a
	// terminal.
	prompts  io.Writer
	progress bool // a progress line is drawn
}

func newTerminal(e *env) *terminal {
	t := &terminal{w: e.stderr, tty: e.stderrTTY, ask: e.stdinTTY, in: bufio.NewReader(e.stdin), prompts: e.stderr}
	if e.stdinTTY && !e.stderrTTY && e.tty != nil {
		t.prompts = e.tty
	}
	return t
}

// printf writes on stderr, over the progress line if one is drawn.
func (t *terminal) printf(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	// What ferry prints on stderr carries servers' text (names, errors,
	// log messages, their stderr under -v): none of it may drive the
	// terminal.
	io.WriteString(t.w, safe(fmt.Sprintf(format, a...)))
}

// askf writes a question where questions go (see prompts), over the
// progress line if one is drawn, its server text made safe.
func (t *terminal) askf(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	io.WriteString(t.prompts, safe(fmt.Sprintf(format, a...)))
}

// writer is stderr as an io.Writer for loggers, going through printf.
func (t *terminal) writer() io.Writer { return termWriter{t} }

type termWriter struct{ t *terminal }

func (w termWriter) Write(b []byte) (int, error) {
	w.t.printf("%s", b)
	return len(b), nil
}

func (t *terminal) clearLocked() {
	if t.progress {
		fmt.Fprint(t.w, "\r\x1b[K")
		t.progress = false
	}
}

func (t *terminal) clearProgress() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
}

// showProgress draws the progress of a call on one line.
func (t *terminal) showProgress(label string, p *protocol.ProgressParams) {
	if !t.tty {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprint(t.w, "\r\x1b[K"+progressLine(label, p, 30))
	t.progress = true
}

// progressLine renders "[#####.....]  50% 5/10 message" (a spinner-less
// count when the total is unknown).
func progressLine(label string, p *protocol.ProgressParams, width int) string {
	var b strings.Builder
	b.WriteString(safeLine(label))
	b.WriteString(" ")
	if p.Total > 0 {
		frac := min(max(p.Progress/p.Total, 0), 1)
		n := int(frac * float64(width))
		b.WriteString("[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]")
		fmt.Fprintf(&b, " %3.0f%% %s/%s", frac*100, num(p.Progress), num(p.Total))
	} else {
		fmt.Fprintf(&b, "%s", num(p.Progress))
	}
	if p.Message != "" {
		b.WriteString(" " + safeLine(p.Message))
	}
	return b.String()
}

func num(f float64) string { return strings.TrimSuffix(fmt.Sprintf("%g", f), ".0") }

// elicit answers a server's question: at the terminal when there is one,
// else declined.
func (t *terminal) elicit(ctx context.Context, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	if !t.ask {
		t.printf("ferry: server %q asked %q; declined (stdin is not a terminal to ask at)\n", server, p.Message)
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	return askForm(t.prompts, t.in, server, p)
}
