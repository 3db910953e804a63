package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"golang.org/x/term"
)

// chat is a session of ferry chat.
type chat struct {
	o   *cli
	r   *agentRun
	in  *input
	ed  *lineEditor
	out *screen

	mu         sync.Mutex
	cancelTurn context.CancelFunc // set while a turn runs
	lastPath   string             // where the conversation is kept for --continue
	// unmute gives the terminal back its echo, while a turn holds the
	// keys typed (see holdKeys).
	unmute func()
	// prompt is the line editor's terminal while it waits for a line
	// (guarded by mu): what a SIGHUP's reload reports goes through it,
	// above the prompt and the half-typed line.
	prompt *term.Terminal

	// reloading serializes reloads (/reload, SIGHUP).
	reloading sync.Mutex
	// known are the tools the model was last told of; turn tells it of
	// those that appeared or went away since.
	known []string
	// restarts are the restarts of each server already reported (mu).
	restarts map[string]int
}

// screen serializes what the chat writes on stdout: the streamed answer,
// the tool calls, the progress line (redrawn in place).
type screen struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	col      int  // the cursor is not at the start of a line
	progress bool // a progress line is drawn
	spinning bool // the spinner is drawn
	// pending is the end of streamed text held back at a terminal until
	// the next piece: a character cut between two pieces, or a CR that
	// may start a CRLF.
	pending string
}

// shown is text as the screen shows it: made safe at a terminal (a
// model's words and a server's text may carry escape sequences that
// retitle the window, write the clipboard or clear the screen, see
// safe), exact when stdout is a file or a pipe.
func (s *screen) shown(t string) string {
	if !s.tty {
		return t
	}
	return safe(t)
}

// flushLocked writes the streamed text held back: it will not be
// completed (U+FFFD shows a cut character).
func (s *screen) flushLocked() {
	if s.pending != "" {
		fmt.Fprint(s.w, safe(s.pending))
		s.col += len(s.pending)
		s.pending = ""
	}
}

func (s *screen) clearLocked() {
	if s.progress || s.spinning {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.progress, s.spinning = false, false
	}
}

// spinnerFrames turn while the chat waits for the model or a tool.
const spinnerFrames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

// spinner draws, at a terminal, a spinner and the time since start on a
// line of its own whenever nothing else is drawn (no streamed text
// waiting for its end of line, no progress line, no question), until
// the returned stop is called.
func (s *screen) spinner(start time.Time) (stop func()) {
	if !s.tty {
		return func() {}
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		frames := []rune(spinnerFrames)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-tick.C:
				s.spin(frames[i%len(frames)], time.Since(start))
			}
		}
	}()
	return func() {
		close(done)
		<-ended
		s.mu.Lock()
		s.clearLocked()
		s.mu.Unlock()
	}
}

func (s *screen) spin(frame rune, elapsed time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.col > 0 || s.pending != "" || s.progress {
		return
	}
	fmt.Fprintf(s.w, "\r\x1b[K%c working · %.1f s (Ctrl-C stops)", frame, elapsed.Seconds())
	s.spinning = true
}

// text writes streamed text.
func (s *screen) text(t string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty {
		t = s.pending + t
		n := heldBack(t)
		t, s.pending = t[:n], t[n:]
		t = safe(strings.ReplaceAll(t, "\r\n", "\n"))
	}
	s.clearLocked()
	fmt.Fprint(s.w, t)
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		s.col = len(t) - i - 1
	} else {
		s.col += len(t)
	}
}

// line writes a line of its own.
func (s *screen) line(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	s.flushLocked()
	if s.col > 0 {
		fmt.Fprintln(s.w)
		s.col = 0
	}
	fmt.Fprint(s.w, s.shown(fmt.Sprintf(format+"\n", a...)))
}

// heldBack is where the end of streamed text that may not be complete
// begins: a trailing CR (the LF of a CRLF may follow) or the first bytes
// of a UTF-8 character cut between two pieces.
func heldBack(t string) int {
	if strings.HasSuffix(t, "\r") {
		return len(t) - 1
	}
	for i := len(t) - 1; i >= 0 && i >= len(t)-utf8.UTFMax; i-- {
		if utf8.RuneStart(t[i]) {
			if !utf8.FullRuneInString(t[i:]) {
				return i
			}
			break
		}
	}
	return len(t)
}

// showProgress draws a call's progress on one line, at a terminal.
func (s *screen) showProgress(label string, p *protocol.ProgressParams) {
	if !s.tty {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked()
	if s.col > 0 {
		fmt.Fprintln(s.w)
		s.col = 0
	}
	fmt.Fprint(s.w, "\r\x1b[K"+progressLine(label, p, 24))
	s.progress, s.spinning = true, false
}

// hold runs f with the screen to itself (a question to the user).
func (s *screen) hold(f func(w io.Writer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearLocked()
	s.flushLocked()
	if s.col > 0 {
		fmt.Fprintln(s.w)
		s.col = 0
	}
	f(s.w)
}

var chatCommand = &command{
	name:    "chat",
	summary: "a conversation with a model that uses the servers' tools",
	help:    chatHelp,
	example: "ferry chat --model anthropic/claude-sonnet-4-5",
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		o.agentFlags.declare(fs, false)
		return func(ctx context.Context, o *cli) error { return cmdChat(ctx, o, &o.agentFlags) }
	},
	ownSignals: true, // Ctrl-C stops the current turn
}

const chatHelp = `Type a message to talk to the model; it calls the servers' tools as it needs.
  /tools [SERVER]        the tools the model may call
  /servers               the servers and their state
  /permissions [NAME P]  the approval of each server and tool; NAME (SERVER or
                         SERVER__TOOL) always, ask, never or default sets it,
                         kept for this project
  /reload                read the configuration again: start added servers, stop
                         removed ones, restart changed ones (SIGHUP too)
  /prompts               the servers' prompts, used as /SERVER:PROMPT [k=v ...]
  /SERVER:PROMPT args    add a server's prompt to the conversation and answer it
  @SERVER:URI            in a message, attaches a server's resource
  /model [P/M [URL]]     show or change the model PROVIDER/MODEL (at URL)
  /save FILE, /load FILE save or load the conversation (JSON)
  /clear                 forget the conversation
  /quit                  leave (Ctrl-D too, or Ctrl-C twice on an empty line)
Ctrl-C clears the line being typed, and stops the answer being given.`

// cmdChat runs a chat at the terminal.
func cmdChat(ctx context.Context, o *cli, f *agentFlags) error {
	c := &chat{o: o, in: newInput(o.stdin), out: &screen{w: o.stdout, tty: o.stdoutTTY}}
	dir := stateDir()
	historyPath := ""
	if dir != "" {
		historyPath, c.lastPath = filepath.Join(dir, "chat_history"), filepath.Join(dir, "last-chat.json")
	}
	interactive := o.stdinTTY && o.stdoutTTY
	c.ed = newLineEditor(c.in, o.stdout, int(os.Stdin.Fd()), interactive, o.width, historyPath)
	var ask func(ctx context.Context, q *agent.Question) (agent.Answer, error)
	if interactive {
		ask = c.ask
	}
	// The folder's trust question, at the start and at /reload, reads
	// the user's line from the chat's input, which owns stdin.
	o.term.in = bufio.NewReader(lineSource{c.in})
	r, err := o.startAgent(f, true, c.elicit, ask)
	if err != nil {
		return err
	}
	defer r.sess.Close()
	c.r = r
	r.agent.OnEvent = c.event
	c.known = c.toolNames(context.Background())
	c.noteRestarts()
	if f.resume && c.lastPath != "" {
		if conv, err := agent.LoadConversation(c.lastPath); err == nil {
			r.agent.Conversation = conv
			c.out.line("(going on with the last conversation: %d messages)", len(conv.Messages))
		}
	}
	c.banner()
	stop := c.catchInterrupts()
	defer stop()
	for {
		line, err := c.readLine()
		switch {
		case errors.Is(err, errInterrupt):
			c.out.line("(Ctrl-C again, Ctrl-D or /quit leaves; during an answer Ctrl-C stops it)")
			continue
		case errors.Is(err, io.EOF):
			c.out.line("")
			return nil
		case err != nil:
			return err
		}
		if !interactive {
			c.out.line("%s", line) // echo, for transcripts of piped input
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if quit := c.handle(ctx, line); quit {
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (c *chat) banner() {
	servers, tools := c.r.serverCount()
	c.out.line("ferry chat · %s · %d servers, %d tools · approval %s · /help for commands", c.r.spec, servers, tools, c.r.policy.Mode)
	if err := c.r.sess.startErr; err != nil {
		c.out.line("! %v", err)
	}
}

// catchInterrupts makes Ctrl-C stop the turn that runs, not ferry;
// SIGHUP reads the configuration again, as /reload does (without asking
// about the folder: see reload); SIGTERM stops the turn and ends the
// chat (the servers are then stopped as usual).
func (c *chat) catchInterrupts() func() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				if sig == syscall.SIGHUP {
					go c.reload(context.Background(), false)
					continue
				}
				c.mu.Lock()
				cancel := c.cancelTurn
				c.mu.Unlock()
				if cancel != nil {
					cancel()
				}
				if sig != syscall.SIGINT {
					c.in.close()
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// handle runs a line: a command, or a message for the model. It reports
// whether the chat ends.
func (c *chat) handle(ctx context.Context, line string) bool {
	if strings.HasPrefix(line, "/") {
		name, rest, _ := strings.Cut(line[1:], " ")
		rest = strings.TrimSpace(rest)
		switch name {
		case "quit", "exit", "q":
			return true
		case "help", "?":
			c.out.line("%s", chatHelp)
		case "tools":
			c.listTools(ctx, rest)
		case "servers":
			c.listServers()
		case "permissions":
			c.permissions(ctx, rest)
		case "reload":
			c.reload(ctx, true)
		case "prompts":
			c.listPrompts(ctx)
		case "clear":
			c.conversation().Clear()
			c.out.line("(the conversation is cleared)")
		case "save":
			c.save(rest)
		case "load":
			c.load(rest)
		case "model":
			c.model(rest)
		default:
			if server, prompt, ok := strings.Cut(name, ":"); ok {
				c.usePrompt(ctx, server, prompt, rest)
				break
			}
			c.out.line("unknown command /%s (/help lists them)", name)
		}
		return false
	}
	parts, err := c.attach(ctx, line)
	if err != nil {
		c.out.line("! %v", err)
		return false
	}
	c.turn(ctx, parts...)
	return false
}

func (c *chat) conversation() *agent.Conversation {
	if c.r.agent.Conversation == nil {
		c.r.agent.Conversation = &agent.Conversation{}
	}
	return c.r.agent.Conversation
}

// turn runs one turn; Ctrl-C cancels it and the calls in flight.
func (c *chat) turn(ctx context.Context, parts ...agent.Part) {
	tctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.cancelTurn = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancelTurn = nil
		c.mu.Unlock()
		cancel()
	}()
	c.noteRestarts()
	parts = c.toolNews(tctx, parts)
	start := time.Now()
	c.muteKeys()
	stopSpinner := c.out.spinner(start)
	res, err := c.r.agent.Run(tctx, parts...)
	stopSpinner()
	c.unmuteKeys()
	switch {
	case err != nil && tctx.Err() != nil && ctx.Err() == nil:
		c.out.line("⏹ turn stopped (Ctrl-C); the calls in flight were cancelled")
	case err != nil:
		c.out.line("! %v", err)
	}
	if res != nil {
		steps := "steps"
		if res.Steps == 1 {
			steps = "step"
		}
		c.out.line("  · %d in, %d out tokens · %d %s · %.1f s", res.Usage.InputTokens, res.Usage.OutputTokens, res.Steps, steps, time.Since(start).Seconds())
	}
	c.keep()
}

// muteKeys holds the keys typed during a turn for the next prompt,
// rather than let the terminal echo them into the answer.
func (c *chat) muteKeys() {
	if !c.ed.tty {
		return
	}
	if unmute, err := holdKeys(c.ed.fd); err == nil {
		c.unmute = unmute
	}
}

func (c *chat) unmuteKeys() {
	if c.unmute != nil {
		c.unmute()
		c.unmute = nil
	}
}

// question runs f, a question to the user during a turn, at the terminal
// as it usually is (echoing, line by line). What was typed before it is
// set aside for the next prompt: keys typed during an answer must not
// answer a question asked after them.
func (c *chat) question(f func()) {
	muted := c.unmute != nil
	c.unmuteKeys()
	held := c.in.setAside()
	defer func() {
		c.in.unread(held)
		if muted {
			c.muteKeys()
		}
	}()
	f()
}

// keep saves the conversation for ferry chat --continue.
func (c *chat) keep() {
	if c.lastPath == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(c.lastPath), 0o700); err == nil {
		conv := c.conversation()
		conv.Model = c.r.spec
		conv.Save(c.lastPath)
	}
}

// event shows what the agent does.
func (c *chat) event(e agent.Event) {
	switch e.Kind {
	case agent.EventText:
		c.out.text(e.Text)
	case agent.EventToolStart:
		// A tool's name and arguments, its result, a model's words: cut
		// to the width as they are shown (see screen.shown).
		if !e.Call.Denied && e.Call.Error == "" {
			label := c.out.shown(toolLabel(e.Call))
			args := c.out.shown(oneLineJSON(e.Call.Arguments, math.MaxInt))
			c.out.line("  ⚙ %s %s", label, cutLine(args, max(c.width()-8-len(label), 20)))
		}
	case agent.EventToolProgress:
		c.out.showProgress("    "+toolLabel(e.Call), e.Progress)
	case agent.EventToolEnd:
		c.out.line("  %s", cutLine(c.out.shown(callLine(e.Call)), c.width()-3))
	case agent.EventSampling:
		c.out.line("  %s", cutLine(c.out.shown(samplingLine(e.Sampling)), c.width()-3))
	case agent.EventWarning:
		c.out.line("! %s", e.Text)
	case agent.EventToolsChanged:
		c.out.line("  %s", toolsChangedLine(e.Added, e.Removed))
	}
}

// width is the terminal's width, for lines that must fit on one.
func (c *chat) width() int {
	if c.o.stdoutTTY && c.o.width != nil {
		if w := c.o.width(); w > 20 {
			return w
		}
	}
	return 160
}

// ask asks for an approval in the middle of a turn.
func (c *chat) ask(ctx context.Context, q *agent.Question) (agent.Answer, error) {
	var a agent.Answer
	var err error
	c.out.hold(func(w io.Writer) {
		c.question(func() { a, err = askApproval(ctx, w, c.in.readLine, c.r.spec, q) })
	})
	if err != nil && ctx.Err() != nil {
		// Ctrl-C at the question: the user stopped the turn, which is a
		// no (the agent would report an error as a question not asked).
		return agent.Refuse, nil
	}
	return a, err
}

// elicit asks the user a server's question in the middle of a turn.
func (c *chat) elicit(ctx context.Context, server string, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	if !c.ed.tty {
		c.out.line("  ferry: server %q asked %q; declined (no terminal to ask)", server, p.Message)
		return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
	}
	var res *protocol.ElicitResult
	var err error
	c.out.hold(func(w io.Writer) {
		c.question(func() { res, err = askForm(w, bufio.NewReader(c.in.reader(ctx)), server, p) })
	})
	return res, err
}

func (c *chat) listTools(ctx context.Context, server string) {
	tools, err := c.r.hostTools(ctx)
	for _, t := range tools {
		if server != "" && t.Server != server {
			continue
		}
		c.out.line("  %-40s %s", t.Name, cutLine(t.Tool.Description, max(c.width()-46, 20)))
	}
	if err != nil {
		c.out.line("! %v", err)
	}
}

func (c *chat) listServers() {
	for _, s := range c.r.sess.Servers() {
		st := s.Status()
		line := fmt.Sprintf("  %-20s %-8s", s.Name(), st.State)
		if st.State == host.Ready {
			line += fmt.Sprintf(" %s %s", st.Info.Name, st.Version)
		}
		if st.Pid != 0 {
			line += fmt.Sprintf(" pid %d", st.Pid)
		}
		if st.Restarts > 0 {
			line += fmt.Sprintf(" (restarted %d×)", st.Restarts)
		}
		if st.Err != nil {
			line += " " + st.Err.Error()
		}
		c.out.line("%s", line)
	}
}

func (c *chat) listPrompts(ctx context.Context) {
	for _, s := range c.r.sess.Servers() {
		s.Do(ctx, func(cl *client.Client) error {
			prompts, _ := client.Collect(cl.Prompts(ctx))
			for _, p := range prompts {
				var args []string
				for _, a := range p.Arguments {
					args = append(args, a.Name+"=…")
				}
				c.out.line("  /%s:%s %s  %s", s.Name(), p.Name, strings.Join(args, " "), cutLine(p.Description, 60))
			}
			return nil
		})
	}
}

// usePrompt adds a server's prompt to the conversation; when it ends with
// the user's words, the model answers.
func (c *chat) usePrompt(ctx context.Context, server, name, rest string) {
	s, err := c.r.sess.Server(server)
	if err != nil {
		c.out.line("! %v", err)
		return
	}
	var res *protocol.GetPromptResult
	err = s.Do(ctx, func(cl *client.Client) error {
		args, err := promptArgs(ctx, cl, name, rest)
		if err != nil {
			return err
		}
		res, err = cl.GetPrompt(ctx, name, args)
		return err
	})
	if err != nil {
		c.out.line("! %v", err)
		return
	}
	msgs := agent.PromptMessages(res)
	if len(msgs) == 0 {
		c.out.line("(the prompt is empty)")
		return
	}
	conv := c.conversation()
	conv.Messages = append(conv.Messages, msgs...)
	c.out.line("  (prompt %s:%s added: %d messages)", server, name, len(msgs))
	if msgs[len(msgs)-1].Role == agent.User {
		c.turn(ctx)
	}
}

// promptArgs reads k=v pairs, or, for a prompt of one argument, the whole
// text as its value.
func promptArgs(ctx context.Context, cl *client.Client, name, rest string) (map[string]string, error) {
	args := map[string]string{}
	if rest == "" {
		return args, nil
	}
	if !strings.Contains(rest, "=") {
		prompts, err := client.Collect(cl.Prompts(ctx))
		if err != nil {
			return nil, err
		}
		for _, p := range prompts {
			if p.Name == name && len(p.Arguments) == 1 {
				args[p.Arguments[0].Name] = rest
				return args, nil
			}
		}
		return nil, fmt.Errorf("give the prompt's arguments as k=v")
	}
	for _, kv := range strings.Fields(rest) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want k=v", kv)
		}
		args[k] = v
	}
	return args, nil
}

// attachment finds the @SERVER:URI a chat line names. Compiled at the
// first line of a chat rather than at package initialisation, which
// every ferry command would pay for.
var attachment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`@([A-Za-z0-9_.-]+):(\S+)`) })

// attach makes a message's parts: its text, then the contents of the
// resources it names as @SERVER:URI.
func (c *chat) attach(ctx context.Context, line string) ([]agent.Part, error) {
	parts := []agent.Part{agent.Text(line)}
	for _, m := range attachment().FindAllStringSubmatch(line, -1) {
		s, err := c.r.sess.Server(m[1])
		if err != nil {
			continue // not a server: an e-mail address, a handle
		}
		var res *protocol.ReadResourceResult
		err = s.Do(ctx, func(cl *client.Client) error {
			var err error
			res, err = cl.ReadResource(ctx, m[2])
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", m[2], m[1], err)
		}
		parts = append(parts, agent.ResourceParts(res.Contents)...)
		c.out.line("  (attached %s from %s)", m[2], m[1])
	}
	return parts, nil
}

func (c *chat) save(path string) {
	if path == "" {
		c.out.line("! /save FILE")
		return
	}
	conv := c.conversation()
	conv.Model = c.r.spec
	if err := conv.Save(path); err != nil {
		c.out.line("! %v", err)
		return
	}
	c.out.line("(saved %d messages to %s)", len(conv.Messages), path)
}

func (c *chat) load(path string) {
	if path == "" {
		c.out.line("! /load FILE")
		return
	}
	conv, err := agent.LoadConversation(path)
	if err != nil {
		c.out.line("! %v", err)
		return
	}
	c.r.agent.Conversation = conv
	c.out.line("(loaded %d messages from %s, held with %s)", len(conv.Messages), path, orNone(conv.Model))
}

// model is /model [PROVIDER/MODEL [BASE-URL]]: shows or changes the
// model, at BASE-URL if given (see openModel for the default).
func (c *chat) model(args string) {
	spec, base, _ := strings.Cut(strings.TrimSpace(args), " ")
	if spec == "" {
		c.out.line("  %s", c.r.spec)
		return
	}
	m, err := c.r.openModel(spec, strings.TrimSpace(base))
	if err != nil {
		c.out.line("! %v", err)
		return
	}
	c.r.agent.Model, c.r.agent.ModelName, c.r.spec = m, spec, spec
	c.out.line("(the model is now %s)", spec)
}

func orNone(s string) string {
	if s == "" {
		return "an unknown model"
	}
	return s
}

// readLine reads the user's next line, with the editor's terminal known
// to note meanwhile.
func (c *chat) readLine() (string, error) {
	c.mu.Lock()
	c.prompt = c.ed.term
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.prompt = nil
		c.mu.Unlock()
	}()
	return c.ed.readLine()
}

// note writes a line that may come at any time (a SIGHUP's reload): at
// the prompt, the line editor draws it above the prompt and what is
// being typed, which stay; elsewhere it is a line of the screen.
func (c *chat) note(format string, a ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.prompt != nil {
		fmt.Fprint(c.prompt, safe(fmt.Sprintf(format+"\n", a...)))
		return
	}
	c.out.line(format, a...)
}

// reload reads the configuration again and applies it to the running
// servers (host.Apply, as ferry serve does at SIGHUP): added servers
// start, removed ones stop, changed ones and those given up after
// crashes restart, the conversation goes on. asked is a reload the user
// typed, who can then be asked about the folder's configuration; a
// SIGHUP's reload, which comes while the prompt owns the terminal,
// leaves a new or changed folder configuration alone and says so.
func (c *chat) reload(ctx context.Context, asked bool) {
	c.reloading.Lock()
	defer c.reloading.Unlock()
	if !asked && c.o.projectNeedsTrust() {
		c.note("(SIGHUP: this folder's MCP configuration is new or changed: /reload shows it and asks before it starts anything)")
		return
	}
	servers, err := c.o.loadServers()
	if err != nil {
		c.note("! reload: %v; nothing changed", err)
		return
	}
	before := c.toolNames(ctx)
	actx, cancel := context.WithTimeout(ctx, c.o.connectTO+time.Second)
	defer cancel()
	change, err := c.r.sess.Apply(actx, servers)
	c.note("(configuration read again: %s)", changeLine(change))
	if err != nil {
		c.note("! %v", err)
	}
	if added, removed := diffNames(before, c.toolNames(ctx)); len(added)+len(removed) > 0 {
		c.note("  %s", toolsChangedLine(added, removed))
	}
}

// changeLine says what a reload did to the servers.
func changeLine(ch host.Change) string {
	if ch.Empty() {
		return "no server changed"
	}
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"started", ch.Added}, {"stopped", ch.Removed}, {"restarted", ch.Restarted}} {
		if len(p.names) > 0 {
			parts = append(parts, p.what+" "+strings.Join(p.names, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// toolsChangedLine shows the tools that appeared (+) and went away (−).
func toolsChangedLine(added, removed []string) string {
	var parts []string
	for _, n := range added {
		parts = append(parts, "+"+n)
	}
	for _, n := range removed {
		parts = append(parts, "−"+n)
	}
	return "(the tools changed: " + strings.Join(parts, " ") + ")"
}

// toolNames are the names of the tools the servers offer now, sorted.
func (c *chat) toolNames(ctx context.Context) []string {
	list, _ := c.r.sess.Tools(ctx)
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	slices.Sort(names)
	return names
}

// diffNames are the names of now not in before, and of before not in
// now; both sorted.
func diffNames(before, now []string) (added, removed []string) {
	for _, n := range now {
		if _, ok := slices.BinarySearch(before, n); !ok {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if _, ok := slices.BinarySearch(now, n); !ok {
			removed = append(removed, n)
		}
	}
	return added, removed
}

// toolNews tells the model, in the user's message, which tools appeared
// or went away since it was last told: the tool list of each request
// shows what there is, not that a tool it used a moment ago is gone
// (a server removed or being restarted) or that a new one is there.
func (c *chat) toolNews(ctx context.Context, parts []agent.Part) []agent.Part {
	if len(parts) == 0 || parts[0].Type != agent.TextPart {
		return parts // a prompt's messages: told at the next message
	}
	now := c.toolNames(ctx)
	added, removed := diffNames(c.known, now)
	if len(added)+len(removed) == 0 {
		return parts
	}
	c.known = now
	var news []string
	if len(added) > 0 {
		news = append(news, "now available: "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		news = append(news, "no longer available: "+strings.Join(removed, ", "))
	}
	parts = slices.Clone(parts)
	parts[0].Text += "\n\n[ferry: the tools changed since the last message; " + strings.Join(news, "; ") + "]"
	return parts
}

// noteRestarts says which servers crashed and were restarted since the
// last look: their tools were listed again, the conversation goes on.
func (c *chat) noteRestarts() {
	for _, s := range c.r.sess.Servers() {
		st := s.Status()
		c.mu.Lock()
		if c.restarts == nil {
			c.restarts = map[string]int{}
		}
		seen, ok := c.restarts[s.Name()]
		c.restarts[s.Name()] = st.Restarts
		c.mu.Unlock()
		if ok && st.Restarts > seen {
			c.note("(server %s stopped and was restarted, %d× in all; its tools were listed again)", s.Name(), st.Restarts)
		}
	}
}

// lineSource hands the chat's input a line at a time, so that a
// question read through a bufio.Reader over it (the folder's trust)
// takes the user's answer and nothing typed after it.
type lineSource struct{ in *input }

func (l lineSource) Read(p []byte) (int, error) {
	line, err := l.in.readLine(context.Background())
	if err != nil {
		return 0, err
	}
	b := []byte(line + "\n")
	n := copy(p, b)
	if n < len(b) {
		l.in.unread(b[n:])
	}
	return n, nil
}
