package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
)

var runCommand = &command{
	name:    "run",
	args:    "-p PROMPT",
	summary: "one turn of a model on the servers' tools: the answer, or with --format json every call and the usage",
	help: `Gives the prompt to a model with the servers' tools and prints its answer
(with --format json: every tool call and the usage too).`,
	example: "ferry run --model ollama/llama3.2 -p 'What files are in /tmp?'",
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		o.agentFlags.declare(fs, true)
		return func(ctx context.Context, o *cli) error { return cmdRun(ctx, o, &o.agentFlags) }
	},
}

// cmdRun runs one turn without a conversation: the prompt, the tool
// calls, the answer on stdout. With --format json stdout gets one JSON
// document whatever happens (agent.Result: the answer, the calls, the
// usage, and the error that stopped the turn); with --format ndjson a
// line for each agent.Event as it happens, the last of kind "result"
// with that document. A call refused because it needed approval and
// there was no terminal to ask is said on stderr when it happens, and
// makes the run exit with exitNotApproved (the answer printed all the
// same).
func cmdRun(ctx context.Context, o *cli, f *agentFlags) error {
	if o.format == "" {
		o.json = false // the answer and the errors as text, for a shell, unless asked
	}
	rep := &runReport{o: o, ndjson: o.format == "ndjson", show: o.stderrTTY || o.verbose}
	res, err := o.runTurn(ctx, f, rep)
	return rep.finish(res, err)
}

// runTurn starts the servers and runs the turn, reporting to rep.
func (o *cli) runTurn(ctx context.Context, f *agentFlags, rep *runReport) (*agent.Result, error) {
	prompt, err := o.runPrompt(f)
	if err != nil {
		return nil, err
	}
	var ask func(ctx context.Context, q *agent.Question) (agent.Answer, error)
	spec := ""
	if o.stdinTTY && o.stderrTTY {
		ask = func(ctx context.Context, q *agent.Question) (agent.Answer, error) {
			return o.term.question(func(w io.Writer, read lineReader) (agent.Answer, error) {
				return askApproval(ctx, w, read, spec, q)
			})
		}
	}
	r, err := o.startAgent(f, false, o.term.elicit, ask)
	if err != nil {
		return nil, err
	}
	defer r.sess.Close()
	spec, rep.spec = r.spec, r.spec
	if r.sess.startErr != nil {
		rep.serversFailed(r.sess.startErr)
	}
	r.agent.OnEvent = rep.event
	return r.agent.Run(ctx, agent.Text(prompt))
}

// runReport is the output of ferry run: the answer as text, one JSON
// document, or a stream of events; and on stderr the progress (at a
// terminal or with -v) and the refusals for want of approval.
type runReport struct {
	o      *cli
	ndjson bool
	show   bool
	spec   string // PROVIDER/MODEL, once known

	startErr error // servers that failed to start

	mu       sync.Mutex
	unasked  []string // what was refused for want of someone to ask
	notified bool
}

// event reports an event of the agent as it happens.
func (rep *runReport) event(e agent.Event) {
	rep.noteUnasked(e)
	if rep.ndjson {
		rep.write(e)
	}
	rep.o.runEvent(e, rep.show, !rep.o.json)
}

// noteUnasked records a call or sampling request refused because it
// needed approval and no one could be asked, saying so on stderr the
// first time, before the model is told.
func (rep *runReport) noteUnasked(e agent.Event) {
	what := ""
	switch {
	case e.Kind == agent.EventToolDenied && e.Call.Unasked:
		what = toolLabel(e.Call)
	case e.Kind == agent.EventSampling && e.Sampling.Unasked:
		what = "sampling for " + e.Sampling.Server
	default:
		return
	}
	rep.mu.Lock()
	first := !rep.notified
	rep.notified = true
	if !slices.Contains(rep.unasked, what) {
		rep.unasked = append(rep.unasked, what)
	}
	rep.mu.Unlock()
	if first {
		rep.o.logf("ferry: %s needs approval and there is no terminal to ask: it is refused, as is all that needs approval, "+
			"and ferry run will exit with %d; for scripts, give --approval auto or allow the tools in the configuration's agent settings "+
			"(a tool set to ask with /permissions is asked about in every mode: set it to always)",
			what, exitNotApproved)
	}
}

// serversFailed reports servers that failed to start: the turn goes on
// without them, and the run's exit code says so.
func (rep *runReport) serversFailed(err error) {
	rep.startErr = err
	switch {
	case rep.ndjson:
		rep.write(agent.Event{Kind: agent.EventWarning, Text: err.Error()})
	case !rep.o.json:
		rep.o.logf("ferry: %v", err)
	}
}

// write writes one event as a line of JSON.
func (rep *runReport) write(e agent.Event) {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(agent.Event{Kind: agent.EventWarning, Text: "ferry: an event could not be written: " + err.Error()})
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	fmt.Fprintf(rep.o.stdout, "%s\n", rep.o.jsonText(b))
}

// finish prints the outcome and returns the run's error: the turn's,
// else that of servers that failed to start or of calls refused for
// want of approval, which leave the answer without what they would have
// given (the answer is printed all the same).
func (rep *runReport) finish(res *agent.Result, err error) error {
	if err == nil {
		err = rep.incomplete()
	}
	o := rep.o
	if !o.json {
		if res != nil && res.Error == nil {
			// The model's words may repeat a tool's result: inert at a
			// terminal, exact to a pipe.
			fmt.Fprintln(o.stdout, o.text(strings.TrimRight(res.Answer, "\n")))
		}
		return err
	}
	doc := rep.document(res, err)
	if !rep.ndjson {
		return cmp.Or(err, o.printJSON(doc))
	}
	if doc.Error != nil {
		rep.write(agent.Event{Kind: agent.EventError, Error: doc.Error})
	}
	rep.write(agent.Event{Kind: agent.EventResult, Result: doc})
	return err
}

// incomplete is the error of a turn that ended well but without all it
// might have had: servers missing, calls refused for want of approval.
func (rep *runReport) incomplete() error {
	var na error
	if len(rep.unasked) > 0 {
		na = &notApprovedError{refused: rep.unasked}
	}
	return errors.Join(rep.startErr, na)
}

// document is the run's outcome as JSON: the turn's result (an empty one
// when it did not start) with the error and its exit code.
func (rep *runReport) document(res *agent.Result, err error) *agent.Result {
	doc := &agent.Result{}
	if res != nil {
		doc = res
	}
	doc.Model = cmp.Or(rep.spec, doc.Model)
	if doc.Calls == nil {
		doc.Calls = []*agent.CallRecord{}
	}
	if doc.Error = agent.NewFailure(err); doc.Error != nil {
		doc.Error.Code = exitCode(err)
		doc.Error.Kind = codeKinds[doc.Error.Code]
	}
	return doc
}

// notApprovedError says the answer lacks what was refused because it
// needed approval and there was no one to ask (exit code
// exitNotApproved).
type notApprovedError struct{ refused []string }

func (e *notApprovedError) Error() string {
	return fmt.Sprintf("the answer lacks what was refused for want of approval (no terminal to ask): %s; "+
		"rerun with --approval auto, or allow the tools in the configuration's agent settings", strings.Join(e.refused, ", "))
}

// runPrompt is the prompt: -p, else the arguments, "-" reading stdin.
func (o *cli) runPrompt(f *agentFlags) (string, error) {
	p := f.prompt
	if p == "" {
		p = strings.Join(o.args, " ")
	}
	if p == "-" {
		b, err := io.ReadAll(io.LimitReader(o.stdin, 1<<20))
		if err != nil {
			return "", err
		}
		p = string(b)
	}
	if strings.TrimSpace(p) == "" {
		return "", usageErrorf(`run needs a prompt: ferry run -p "PROMPT" (or - to read it from stdin)`)
	}
	return p, nil
}

// runEvent shows the agent's progress on stderr: tool calls, progress,
// sampling, and the usage at a terminal or with -v; warnings too
// without -v when the output is text (JSON has them in the result).
func (o *cli) runEvent(e agent.Event, show, warn bool) {
	switch e.Kind {
	case agent.EventWarning:
		if show || warn {
			o.logf("ferry: warning: %s", e.Text)
		}
	case agent.EventToolStart:
		if show {
			o.logf("→ %s %s", toolLabel(e.Call), oneLineJSON(e.Call.Arguments, 160))
		}
	case agent.EventToolProgress:
		if show {
			o.term.showProgress("  "+toolLabel(e.Call), e.Progress)
		}
	case agent.EventToolEnd:
		if show {
			o.logf("%s", callLine(e.Call))
		}
	case agent.EventSampling:
		if show {
			o.logf("%s", samplingLine(e.Sampling))
		}
	case agent.EventToolsChanged:
		if show {
			o.logf("ferry: the tools changed (+%d −%d)", len(e.Added), len(e.Removed))
		}
	case agent.EventUsage:
		if show {
			o.logf("tokens: %d in, %d out", e.Usage.InputTokens, e.Usage.OutputTokens)
		}
	}
}

// callLine is the line of a finished call.
func callLine(c *agent.CallRecord) string {
	switch {
	case c.Denied:
		return fmt.Sprintf("✗ %s not run: %s", toolLabel(c), strings.TrimPrefix(c.Error, "not run: "))
	case c.IsError:
		return fmt.Sprintf("✗ %s %d ms: %s", toolLabel(c), c.Millis, cutLine(c.Error, 200))
	}
	cut := ""
	switch {
	case c.Kept != "":
		cut = " (over its budget: the model got its head and tail; the whole result is in " + c.Kept + ")"
	case c.Cut:
		cut = " (over its budget: the model got its head and tail)"
	}
	return fmt.Sprintf("← %s %d ms%s: %s", toolLabel(c), c.Millis, cut, cutLine(c.Result, 200))
}

// samplingLine is the line of a server's sampling request.
func samplingLine(s *agent.SamplingRecord) string {
	if s.Refused != "" {
		return fmt.Sprintf("⇄ sampling for %s refused: %s", s.Server, s.Refused)
	}
	return fmt.Sprintf("⇄ sampling for %s (%d in, %d out tokens, %d ms): %s", s.Server, s.Usage.InputTokens, s.Usage.OutputTokens,
		s.Duration.Milliseconds(), cutLine(s.Text, 160))
}

// ask runs a question at the terminal, nothing else writing meanwhile.
func (t *terminal) question(f func(w io.Writer, read lineReader) (agent.Answer, error)) (agent.Answer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearLocked()
	return f(t.w, func(context.Context) (string, error) { return readLine(t.in) })
}
