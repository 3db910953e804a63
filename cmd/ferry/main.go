// Command ferry reads the MCP configurations hosts already use
// (mcp-servers.json, claude_desktop_config.json, .cursor/mcp.json,
// .mcp.json, VS Code's mcp.json), starts the servers, lists and calls
// their tools, resources and prompts, and traces the JSON-RPC on the wire.
//
//	ferry --config examples/ferry.json tools
//	ferry call everything.add a=1 b=2
//	ferry --trace tools -- npx -y @modelcontextprotocol/server-everything
//
// Run "ferry help" for the commands, flags and exit codes.
//
// # Adding a command
//
// A command is a file and a line. The file (login.go, serve.go, ...)
// declares a *command: its name (one word, or a group and a word such as
// "auth status"), its usage line, a one-line summary for "ferry help",
// its help text and an example for "ferry NAME --help", and a setup
// function that declares the command's own flags on the flag set it is
// given (each with its usage text, a value name in backquotes; into
// variables of its own, or fields of the *cli it is given when several
// commands share them) and returns the function that runs it:
//
//	var serveCommand = &command{
//		name:    "serve",
//		args:    "[SERVER ...]",
//		summary: "serve the configured servers as one MCP server",
//		help:    "Longer text: what it does, what it needs.",
//		example: "ferry serve --listen 127.0.0.1:8080",
//		setup: func(fs *flag.FlagSet, o *cli) runFunc {
//			listen := fs.String("listen", "127.0.0.1:8080", "`ADDR` to listen on")
//			return func(ctx context.Context, o *cli) error { return serve(ctx, o, *listen) }
//		},
//	}
//
// The line adds it to the commands table in commands.go. Help, flag
// parsing (global and own flags anywhere before "--") and the shell
// completions come from the table.
//
// The ctx a command runs with is cancelled by Ctrl-C, SIGTERM or SIGHUP
// (its cause is then an *interrupted): pass it to every request and
// wait, return when it is done, and let deferred clean-up run (sess.Close
// sends notifications/cancelled for calls in flight, ends HTTP sessions
// and stops each stdio server's process group). ferry then exits with
// 130, 143 or 129 and prints no error. A second signal, or clean-up
// longer than cleanupGrace, ends the process at once. A command that
// handles signals itself (serve reloads on SIGHUP, chat stops a turn on
// Ctrl-C) sets ownSignals.
//
// A command reports failure by returning an error: a usageError (exit 1)
// for a mistake in the command line, a *host.Error for a server's
// failure, anything else for exit 2. What it prints on stdout is the
// result only, and only on success: on failure stdout stays empty, and
// the error goes to stderr (one sentence at a terminal, the detail under
// -v, the whole envelope with --format json).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"golang.org/x/term"
)

// version is ferry's version, shown by --version and sent as clientInfo.
const version = "0.1.0"

func main() {
	e := &env{
		stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr,
		stdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		width:     func() int { w, _, _ := term.GetSize(int(os.Stdout.Fd())); return w },
	}
	if e.stdinTTY && !e.stderrTTY {
		// Questions go to the terminal the answers come from.
		if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			e.tty = f
		}
	}
	e.signals = true
	os.Exit(run(context.Background(), e, os.Args[1:]))
}

// env is what a run sees of the outside world, so that tests can fake a
// terminal.
type env struct {
	stdin                          io.Reader
	stdout, stderr                 io.Writer
	stdinTTY, stdoutTTY, stderrTTY bool
	width                          func() int
	// tty is the controlling terminal, for questions when stdin is a
	// terminal but stderr is not; nil otherwise.
	tty io.Writer
	// signals: Ctrl-C, SIGTERM and SIGHUP cancel the run's context
	// (main sets it; tests send no signals).
	signals bool
}

// Exit codes, stable for scripts.
const (
	exitOK          = 0
	exitUsage       = 1 // bad flags or arguments, unknown server or tool, configuration errors
	exitError       = 2 // anything else
	exitAuth        = 3 // the server refused the credentials (HTTP 401/403)
	exitUnreachable = 4 // a server could not be started or reached, crashed, or timed out
	exitTool        = 5 // the tool reported an error (isError), or its task failed or was cancelled
	exitProtocol    = 6 // the server answered a request with a JSON-RPC error (a protocol error)
)

// run runs the command line args; ctx cancelled means interrupted.
func run(ctx context.Context, e *env, args []string) int {
	o, cmd, err := parseFlags(e, args)
	if err != nil {
		if err == errHelp {
			if o.cmd == nil {
				if pos, _ := scanPositionals(args); len(pos) > 0 && len(group(pos[:1])) > 0 {
					writeGroupHelp(e.stdout, pos[0], group(pos[:1]))
					return exitOK
				}
				writeUsage(e.stdout)
			} else {
				writeCommandHelp(e.stdout, o.cmd)
			}
			return exitOK
		}
		return o.fail(err)
	}
	if o.showVersion {
		fmt.Fprintln(e.stdout, "ferry", version)
		return exitOK
	}
	if o.cmd == nil {
		writeUsage(e.stderr)
		return exitUsage
	}
	if e.signals && !o.cmd.ownSignals && !o.task { // call --task asks what to do on Ctrl-C
		var stop func()
		ctx, stop = withSignals(ctx)
		defer stop()
	}
	o.term = newTerminal(e)
	if err := o.openTrace(); err != nil {
		return o.fail(err)
	}
	given := slices.Clone(o.args)
	err = cmd(ctx, o)
	if ctx.Err() == nil && o.offerLogin(ctx, err) {
		o.args = given // as given: reading an ad-hoc URL's entry takes it out
		err = cmd(ctx, o)
	}
	o.closeTrace()
	if code, ok := interruptCode(ctx); ok {
		o.term.clearProgress()
		return code
	}
	// A command that handles signals itself (call --task) says what it
	// did and returns the signal: its exit status, nothing more to say.
	var in *interrupted
	if errors.As(err, &in) {
		o.term.clearProgress()
		return in.code()
	}
	return o.finish(err)
}
