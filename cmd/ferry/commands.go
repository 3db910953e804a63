package main

import (
	"context"
	"flag"
	"slices"
	"strings"
)

// commands is every subcommand of ferry, in the order "ferry help" lists
// them: one line each. A command lives in a file of its own that declares
// it (see the package documentation). The table is filled in init because
// some commands (help, completion) read it.
var commands []*command

func init() {
	commands = []*command{
		serversCommand,
		toolsCommand,
		callCommand,
		tasksCommand,
		resourcesCommand,
		readCommand,
		promptsCommand,
		promptCommand,
		skillsCommand,
		skillCommand,
		rpcCommand,
		serveCommand,
		proxyCommand,
		runCommand,
		chatCommand,
		loginCommand,
		logoutCommand,
		authStatusCommand,
		completionCommand,
		helpCommand,
	}
}

// command is one subcommand of ferry.
type command struct {
	// name is what the user types after "ferry": one word, or a group
	// and a word ("auth status").
	name string
	// args is the usage line after the name: "SERVER.TOOL [k=v ...]".
	args string
	// summary is the command's line in "ferry help".
	summary string
	// help is the text of "ferry NAME --help" below the usage line.
	help string
	// example is one command line or more, each on a line of its own.
	example string
	// setup declares the command's own flags on fs (each with its usage
	// text, which the help lists) and returns the function that runs the
	// command once they are parsed. The global flags are declared
	// already.
	setup func(fs *flag.FlagSet, o *cli) runFunc
	// noConfig marks a command that starts no server and reads no
	// configuration (help, completion).
	noConfig bool
	// ownSignals marks a command that handles SIGINT, SIGTERM and SIGHUP
	// itself: its context is not cancelled by them.
	ownSignals bool
}

// runFunc runs a command. ctx is cancelled when ferry is interrupted
// (Ctrl-C, SIGTERM): a command passes it to every request and returns,
// and its deferred clean-up (closing the servers) then runs.
type runFunc func(ctx context.Context, o *cli) error

// noFlags is the setup of a command without flags of its own.
func noFlags(run runFunc) func(*flag.FlagSet, *cli) runFunc {
	return func(*flag.FlagSet, *cli) runFunc { return run }
}

// words is the command's name as the words typed.
func (c *command) words() []string { return strings.Fields(c.name) }

// lookup returns the command the positional arguments name (the longest
// match, so that "auth status" wins over "auth"), and how many words its
// name took.
func lookup(pos []string) (*command, int) {
	var best *command
	n := 0
	for _, c := range commands {
		w := c.words()
		if len(w) > n && len(w) <= len(pos) && slices.Equal(w, pos[:len(w)]) {
			best, n = c, len(w)
		}
	}
	return best, n
}

// group returns the commands whose names start with the words of prefix
// ("auth" gives "auth status", "auth login"...).
func group(prefix []string) []*command {
	var out []*command
	for _, c := range commands {
		w := c.words()
		if len(w) > len(prefix) && slices.Equal(w[:len(prefix)], prefix) {
			out = append(out, c)
		}
	}
	return out
}

// flagSet returns the flag set of the command: the global flags bound to
// o, then the command's own, and the command's run function.
func (c *command) flagSet(o *cli) (*flag.FlagSet, runFunc) {
	fs := newFlagSet("ferry " + c.name)
	o.globalFlags(fs)
	var run runFunc
	if c.setup != nil {
		run = c.setup(fs, o)
	}
	return fs, run
}

// ownFlags returns the names of the flags the command adds to the global
// ones.
func (c *command) ownFlags() []*flag.Flag {
	if c.setup == nil {
		return nil
	}
	fs := newFlagSet(c.name)
	c.setup(fs, &cli{})
	var out []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f) })
	return out
}
