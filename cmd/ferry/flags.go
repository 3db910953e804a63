package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ferrymcp/ferry/config"
)

// cli is one run: the parsed flags and arguments, and what the commands
// share.
type cli struct {
	*env
	command string
	args    []string // positional arguments after the command
	adhoc   []string // the command line after --

	configs                        listFlag
	format                         string
	argsJSON                       string
	server                         string
	envs, headers, roots           listFlag
	cwd                            string
	sse                            bool
	trace                          bool
	traceFile                      string
	timeout, maxTimeout, connectTO time.Duration
	protocol                       string
	prefix, separator              string
	logLevel                       string
	verbose                        bool
	showVersion                    bool
	serve                          serveFlags

	agentFlags agentFlags

	// files are the configuration files read (for the agent's settings).
	files []*config.File

	json   bool // output JSON
	tracer *tracer
	term   *terminal
	task   bool // call --task: let the server run the call as a task
	wait   bool // tasks SERVER ID --wait
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

var errHelp = errors.New("help")

// parseFlags reads flags anywhere among the arguments up to "--"; the
// first positional argument is the command.
func parseFlags(e *env, args []string) (*cli, error) {
	o := &cli{env: e}
	fs := flag.NewFlagSet("ferry", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&o.configs, "config", "")
	fs.StringVar(&o.format, "format", "", "")
	fs.StringVar(&o.argsJSON, "args", "", "")
	fs.StringVar(&o.server, "server", "", "")
	fs.Var(&o.envs, "env", "")
	fs.Var(&o.headers, "header", "")
	fs.Var(&o.roots, "root", "")
	fs.StringVar(&o.cwd, "cwd", "", "")
	fs.BoolVar(&o.sse, "sse", false, "")
	fs.BoolVar(&o.trace, "trace", false, "")
	fs.StringVar(&o.traceFile, "trace-file", "", "")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "")
	fs.DurationVar(&o.maxTimeout, "max-timeout", 10*time.Minute, "")
	fs.DurationVar(&o.connectTO, "connect-timeout", 60*time.Second, "")
	fs.StringVar(&o.protocol, "protocol", "", "")
	fs.StringVar(&o.prefix, "prefix", "always", "")
	fs.StringVar(&o.separator, "separator", "__", "")
	fs.StringVar(&o.logLevel, "log-level", "", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.showVersion, "version", false, "")
	fs.BoolVar(&o.task, "task", false, "")
	fs.BoolVar(&o.wait, "wait", false, "")
	// ferry serve
	fs.StringVar(&o.serve.addr, "addr", "127.0.0.1:8000", "")
	fs.StringVar(&o.serve.tokenFile, "token-file", "", "")
	fs.BoolVar(&o.serve.insecure, "insecure-no-auth", false, "")
	fs.Var(&o.serve.isolate, "isolate", "")
	fs.Var(&o.serve.origins, "allow-origin", "")
	fs.Var(&o.serve.hosts, "allow-host", "")
	fs.DurationVar(&o.serve.drain, "drain", 10*time.Second, "")
	fs.IntVar(&o.serve.maxSessions, "max-sessions", 10000, "")
	fs.IntVar(&o.serve.maxProcs, "max-session-processes", 100, "")
	fs.StringVar(&o.serve.logFormat, "log-format", "text", "")
	fs.BoolVar(&o.serve.logRequests, "log-requests", false, "")
	fs.BoolVar(&o.serve.noMetrics, "no-metrics", false, "")
	af := &o.agentFlags
	fs.StringVar(&af.model, "model", "", "")
	fs.StringVar(&af.baseURL, "base-url", "", "")
	fs.StringVar(&af.approval, "approval", "", "")
	fs.StringVar(&af.prompt, "p", "", "")
	fs.StringVar(&af.system, "system", "", "")
	fs.IntVar(&af.maxSteps, "max-steps", 0, "")
	fs.Int64Var(&af.maxTokens, "max-tokens", 0, "")
	fs.DurationVar(&af.timeLimit, "time-limit", 0, "")
	fs.BoolVar(&af.resume, "continue", false, "")

	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return o, errHelp
			}
			o.setFormat()
			return o, usageErrorf("%v", err)
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			o.adhoc = rest
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if len(pos) > 0 {
		o.command, o.args = pos[0], pos[1:]
	}
	if err := o.setFormat(); err != nil {
		return o, err
	}
	return o, nil
}

func (o *cli) setFormat() error {
	switch o.format {
	case "":
		o.json = !o.stdoutTTY
	case "json":
		o.json = true
	case "table", "text":
		o.json = false
	default:
		return usageErrorf("--format must be table or json, not %q", o.format)
	}
	return nil
}

// usageError is a mistake in the command line (exit code 1).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Sprintf(format, a...)}
}
