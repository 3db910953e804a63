package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

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

// runOut is the object `ferry run --format json` prints.
type runOut struct {
	Answer     string              `json:"answer"`
	Model      string              `json:"model"`
	ToolCalls  []*agent.CallRecord `json:"toolCalls"`
	Usage      agent.Usage         `json:"usage"`
	Steps      int                 `json:"steps"`
	StopReason agent.StopReason    `json:"stopReason,omitempty"`
}

// cmdRun runs one turn without a conversation: the prompt, the tool
// calls, the answer on stdout (or one JSON object with --format json).
func cmdRun(ctx context.Context, o *cli, f *agentFlags) error {
	prompt, err := o.runPrompt(f)
	if err != nil {
		return err
	}
	if o.format == "" {
		o.json = false // the answer, for a shell to use, unless asked
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
		return err
	}
	defer r.sess.Close()
	spec = r.spec
	if r.sess.startErr != nil {
		o.logf("ferry: %v", r.sess.startErr)
	}
	show := o.stderrTTY || o.verbose
	r.agent.OnEvent = func(e agent.Event) { o.runEvent(e, show) }
	res, err := r.agent.Run(ctx, agent.Text(prompt))
	if err != nil {
		return err
	}
	if res.Model == "" {
		res.Model = r.spec
	}
	if o.json {
		calls := res.Calls
		if calls == nil {
			calls = []*agent.CallRecord{}
		}
		if err := o.printJSON(&runOut{Answer: res.Answer, Model: r.spec, ToolCalls: calls, Usage: res.Usage, Steps: res.Steps, StopReason: res.Stop}); err != nil {
			return err
		}
	} else {
		// The model's words may repeat a tool's result: inert at a
		// terminal, exact to a pipe.
		fmt.Fprintln(o.stdout, o.text(strings.TrimRight(res.Answer, "\n")))
	}
	return r.sess.startErr
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
// sampling, warnings and the usage (warnings always, the rest at a
// terminal or with -v).
func (o *cli) runEvent(e agent.Event, show bool) {
	switch e.Kind {
	case agent.EventWarning:
		o.logf("ferry: warning: %s", e.Text)
	case agent.EventToolStart:
		if show && !e.Call.Denied && e.Call.Error == "" {
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
	if c.Cut {
		cut = " (cut to the size limit)"
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
