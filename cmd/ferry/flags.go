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

// cli is one run: the parsed global flags and arguments, and what the
// commands share. A command's own flags are its own (see command.setup).
type cli struct {
	*env
	cmd   *command
	args  []string // positional arguments after the command's name
	adhoc []string // the command line after --

	configs                        listFlag
	format                         string
	envs, headers, roots           listFlag
	cwd                            string
	inheritEnv                     bool
	sse                            bool
	trace                          bool
	traceFile                      string
	timeout, maxTimeout, connectTO time.Duration
	protocol                       string
	prefix, separator              string
	logLevel                       string
	verbose                        bool
	outputDir                      string // call and read: --output-dir
	trustFolder                    bool
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

	auth   authFlags        // login's flags
	authz  authorizers      // the Authorizers of the run's HTTP servers
	loaded []*config.Server // the entries last read
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// globalFlags declares the flags every command takes. A value name in
// backquotes is shown in the help ("--config FILE").
func (o *cli) globalFlags(fs *flag.FlagSet) {
	fs.Var(&o.configs, "config", "configuration `FILE` (repeatable)")
	fs.StringVar(&o.format, "format", "", "output format `table|json` (default: table on a terminal, json otherwise; ferry run also takes ndjson, a stream of events)")
	fs.Var(&o.envs, "env", "environment `K=V` of an ad-hoc stdio server, or K for ferry's own K (repeatable)")
	fs.BoolVar(&o.inheritEnv, "inherit-env", false, "stdio servers get ferry's whole environment, secrets included (default: PATH, HOME, a few more and their own)")
	fs.StringVar(&o.cwd, "cwd", "", "working `DIR` of an ad-hoc stdio server")
	fs.Var(&o.headers, "header", "HTTP header `'K: V'` of an ad-hoc URL server (repeatable)")
	fs.BoolVar(&o.sse, "sse", false, "the ad-hoc URL speaks the HTTP+SSE transport (2024-11-05)")
	fs.BoolVar(&o.trace, "trace", false, "every JSON-RPC message on stderr: direction, id, method, size, ms to the answer")
	fs.StringVar(&o.traceFile, "trace-file", "", "the same as NDJSON in `FILE`, each message in full (- for stdout)")
	fs.DurationVar(&o.timeout, "timeout", 60*time.Second, "request timeout `D`, reset by progress (default 60s)")
	fs.DurationVar(&o.maxTimeout, "max-timeout", 10*time.Minute, "bound `D` on a request whatever its progress (default 10m)")
	fs.DurationVar(&o.connectTO, "connect-timeout", 60*time.Second, "bound `D` on starting a server and the handshake (default 60s)")
	fs.StringVar(&o.protocol, "protocol", "", "pin a protocol revision `VERSION` (default: detect the era)")
	fs.StringVar(&o.prefix, "prefix", "always", "aggregated tool names: `MODE` always, on-conflict or never (default always)")
	fs.StringVar(&o.separator, "separator", "__", "`S` between server and tool in aggregated names (default __)")
	fs.Var(&o.roots, "root", "offer `DIR` to servers as a root (repeatable)")
	fs.StringVar(&o.logLevel, "log-level", "", "ask servers for log messages at `LEVEL` and show them")
	fs.BoolVar(&o.trustFolder, "trust-folder", false, "start the servers of this folder's own configuration (.mcp.json, .cursor/, .vscode/) without asking whether to trust it (for scripts)")
	fs.BoolVar(&o.verbose, "v", false, "show each server's stages and stderr, and errors in full")
	fs.BoolVar(&o.showVersion, "version", false, "print ferry's version")
}

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// errHelp asks for the help of o.cmd (the global help when nil).
var errHelp = errors.New("help")

// parseFlags finds the command among the arguments, then reads the
// global flags and the command's own anywhere up to "--". It returns the
// command's run function.
func parseFlags(e *env, args []string) (*cli, runFunc, error) {
	o := &cli{env: e}
	pos, help := scanPositionals(args)
	cmd, n := lookup(pos)
	o.cmd = cmd
	if cmd == nil {
		if len(pos) > 0 {
			if len(group(pos[:1])) > 0 {
				return o, nil, errHelp // "ferry auth": the group's commands
			}
			o.globalFlags(newFlagSet("ferry"))
			o.setFormat()
			return o, nil, usageErrorf("unknown command %q (run ferry help)", pos[0])
		}
		cmd = &command{} // flags alone: --version, --help
	}
	fs, run := cmd.flagSet(o)
	rest, err := parseInterleaved(o, fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, nil, errHelp
		}
		o.setFormat()
		if o.cmd != nil {
			err = fmt.Errorf("%v (run ferry %s --help)", err, o.cmd.name)
		}
		return o, nil, usageErrorf("%v", err)
	}
	if help {
		return o, nil, errHelp
	}
	o.args = rest[min(n, len(rest)):]
	if err := o.setFormat(); err != nil {
		return o, nil, err
	}
	return o, run, nil
}

// parseInterleaved parses flags anywhere among the positional arguments,
// up to "--" (the rest is the ad-hoc server's command line), and returns
// the positional arguments.
func parseInterleaved(o *cli, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := args[:len(args)-len(rest)]
		if len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
			o.adhoc = rest
			return pos, nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// scanPositionals returns the positional arguments before "--", skipping
// flags and their values (a flag takes a value when the global flags or
// any command declare it so), and whether -h or --help is among them.
func scanPositionals(args []string) (pos []string, help bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name == "h" || name == "help" {
			help = true
		}
		if !hasValue && takesValue(name) {
			i++
		}
	}
	return pos, help
}

// takesValue reports whether flag name, global or of some command, takes
// a value (is not boolean).
func takesValue(name string) bool {
	fs := newFlagSet("ferry")
	(&cli{}).globalFlags(fs)
	if f := fs.Lookup(name); f != nil {
		return !isBool(f)
	}
	for _, c := range commands {
		for _, f := range c.ownFlags() {
			if f.Name == name {
				return !isBool(f)
			}
		}
	}
	return false
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (o *cli) setFormat() error {
	switch o.format {
	case "":
		o.json = !o.stdoutTTY
	case "json":
		o.json = true
	case "table", "text":
		o.json = false
	case "ndjson":
		// ferry run streams its events; other commands print one result.
		if o.cmd == nil || o.cmd.name != "run" {
			return usageErrorf("--format ndjson is for ferry run; use table or json")
		}
		o.json = true
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
