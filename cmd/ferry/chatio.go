package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"
)

// input owns stdin for a chat: one goroutine reads it, and whoever needs
// the user's words takes them: the line editor at the prompt, or a
// question during a turn (an approval, a server's elicitation), which
// gives up when the turn is cancelled. A read of stdin cannot be
// cancelled; a reader of this can.
type input struct {
	ch     chan []byte
	closed chan struct{} // close makes every read end
	once   sync.Once
	mu     sync.Mutex
	// pending is what a reader got but did not use.
	pending []byte
	err     error
}

func newInput(r io.Reader) *input {
	in := &input{ch: make(chan []byte, 16), closed: make(chan struct{})}
	go func() {
		for {
			buf := make([]byte, 4096)
			n, err := r.Read(buf)
			if n > 0 {
				in.ch <- buf[:n]
			}
			if err != nil {
				in.mu.Lock()
				in.err = err
				in.mu.Unlock()
				close(in.ch)
				return
			}
		}
	}()
	return in
}

// next returns the next bytes, or ctx's error.
func (in *input) next(ctx context.Context) ([]byte, error) {
	in.mu.Lock()
	if len(in.pending) > 0 {
		b := in.pending
		in.pending = nil
		in.mu.Unlock()
		return b, nil
	}
	in.mu.Unlock()
	select {
	case b, ok := <-in.ch:
		if !ok {
			in.mu.Lock()
			defer in.mu.Unlock()
			return nil, in.err
		}
		return b, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-in.closed:
		return nil, io.EOF
	}
}

// close ends the reads, those waiting and those to come, with io.EOF
// (the chat is told to stop).
func (in *input) close() { in.once.Do(func() { close(in.closed) }) }

// Read hands the line editor what was typed.
func (in *input) Read(p []byte) (int, error) {
	b, err := in.next(context.Background())
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	if n < len(b) {
		in.unread(b[n:])
	}
	return n, nil
}

func (in *input) unread(b []byte) {
	in.mu.Lock()
	in.pending = append(append([]byte(nil), b...), in.pending...)
	in.mu.Unlock()
}

// setAside takes what was typed and not read yet, to give back with
// unread.
func (in *input) setAside() []byte {
	in.mu.Lock()
	held := in.pending
	in.pending = nil
	in.mu.Unlock()
	for {
		select {
		case b, ok := <-in.ch:
			if !ok {
				return held // the end of input, which the next read meets again
			}
			held = append(held, b...)
		default:
			return held
		}
	}
}

// readLine reads a line (the terminal in its usual mode hands over
// whole lines), or gives up when ctx is done.
func (in *input) readLine(ctx context.Context) (string, error) {
	var line []byte
	for {
		b, err := in.next(ctx)
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				return strings.TrimRight(string(line), "\r\n"), nil
			}
			return "", err
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = append(line, b[:i]...)
			if i+1 < len(b) {
				in.unread(b[i+1:])
			}
			return strings.TrimRight(string(line), "\r"), nil
		}
		line = append(line, b...)
	}
}

// reader is a cancellable io.Reader of the input, for the elicitation
// form (which reads through a bufio.Reader).
func (in *input) reader(ctx context.Context) io.Reader { return ctxReader{in, ctx} }

type ctxReader struct {
	in  *input
	ctx context.Context
}

func (r ctxReader) Read(p []byte) (int, error) {
	b, err := r.in.next(r.ctx)
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	if n < len(b) {
		r.in.unread(b[n:])
	}
	return n, nil
}

// lineEditor reads the chat's lines: with editing and a history kept
// across sessions at a terminal, plain lines otherwise.
type lineEditor struct {
	in      *input
	keys    *keyReader
	out     io.Writer
	fd      int
	tty     bool
	width   func() int
	history *history
	term    *term.Terminal
	prompt  string
	// interrupts counts the Ctrl-C pressed one after the other, nothing
	// typed between them: the second leaves.
	interrupts int
}

func newLineEditor(in *input, out io.Writer, fd int, tty bool, width func() int, historyPath string) *lineEditor {
	e := &lineEditor{in: in, keys: &keyReader{in: in}, out: out, fd: fd, tty: tty, width: width, prompt: "› "}
	if tty {
		e.history = loadHistory(historyPath)
		e.newTerminal()
	}
	return e
}

// newTerminal starts an empty line. term.Terminal cannot be told to
// forget the line being typed: a Ctrl-C starts a new one.
func (e *lineEditor) newTerminal() {
	e.term = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{e.keys, e.out}, e.prompt)
	e.term.History = e.history
	if e.width != nil {
		if w := e.width(); w > 0 {
			e.term.SetSize(w, 24)
		}
	}
}

// errInterrupt is Ctrl-C at the prompt: the line is dropped, the chat
// goes on.
var errInterrupt = errors.New("interrupted")

// readLine reads the user's next line; io.EOF at the end of input
// (Ctrl-D, or a second Ctrl-C on an empty line), errInterrupt at a
// first Ctrl-C, which drops the line.
func (e *lineEditor) readLine() (string, error) {
	if !e.tty {
		fmt.Fprint(e.out, e.prompt)
		return e.in.readLine(context.Background())
	}
	old, err := term.MakeRaw(e.fd)
	if err != nil {
		return "", err
	}
	e.keys.typed = false
	line, err := e.term.ReadLine()
	term.Restore(e.fd, old)
	if !errors.Is(err, errInterrupt) {
		e.interrupts = 0
		if errors.Is(err, term.ErrPasteIndicator) {
			err = nil
		}
		return line, err
	}
	if e.keys.typed {
		e.interrupts = 0
	}
	e.interrupts++
	fmt.Fprint(e.out, "^C\n")
	e.newTerminal()
	if e.interrupts > 1 {
		return "", io.EOF
	}
	return "", errInterrupt
}

// keyReader hands the line editor what was typed, a Ctrl-C as
// errInterrupt. term.Terminal would end ReadLine at a Ctrl-C with
// io.EOF, as at Ctrl-D, keeping the half-typed line and the bytes it
// had read for the next ReadLine, which then ended at the same Ctrl-C.
type keyReader struct {
	in *input
	// typed is whether anything but a Ctrl-C was read.
	typed bool
}

const keyCtrlC = 3

func (k *keyReader) Read(p []byte) (int, error) {
	b, err := k.in.next(context.Background())
	if err != nil {
		return 0, err
	}
	if i := bytes.IndexByte(b, keyCtrlC); i == 0 {
		k.in.unread(b[1:])
		return 0, errInterrupt
	} else if i > 0 {
		k.in.unread(b[i:]) // the Ctrl-C, after what was typed before it
		b = b[:i]
	}
	n := copy(p, b)
	if n < len(b) {
		k.in.unread(b[n:])
	}
	k.typed = true
	return n, nil
}

// history keeps the chat's lines in a file, so that the arrow keys find
// those of earlier sessions.
type history struct {
	path  string
	lines []string // oldest first
}

const maxHistory = 1000

func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			h.lines = append(h.lines, l)
		}
	}
	if len(h.lines) > maxHistory {
		h.lines = h.lines[len(h.lines)-maxHistory:]
	}
	return h
}

// Add records a line, in memory and in the file.
func (h *history) Add(line string) {
	line = strings.TrimSpace(line)
	if line == "" || len(h.lines) > 0 && h.lines[len(h.lines)-1] == line {
		return
	}
	h.lines = append(h.lines, line)
	if h.path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// Len and At give the lines, the newest first.
func (h *history) Len() int { return len(h.lines) }

func (h *history) At(i int) string { return h.lines[len(h.lines)-1-i] }

// stateDir is where ferry keeps the chat's history and last
// conversation: FERRY_STATE_DIR, else $XDG_STATE_HOME/ferry, else
// ~/.local/state/ferry.
func stateDir() string {
	if d := os.Getenv("FERRY_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "ferry")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".local", "state", "ferry")
}
