package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

var helpCommand = &command{
	name:     "help",
	args:     "[COMMAND]",
	summary:  "this page, or a command's flags and an example",
	help:     "Without a command, lists the commands, the global flags and the exit codes.\nWith one, shows its usage, its flags and an example, as \"ferry COMMAND --help\" does.",
	example:  "ferry help call",
	setup:    noFlags(cmdHelp),
	noConfig: true,
}

func cmdHelp(_ context.Context, o *cli) error {
	if len(o.args) == 0 {
		writeUsage(o.stdout)
		return nil
	}
	if len(o.args) == 1 && o.args[0] == "agent" {
		fmt.Fprint(o.stdout, agentText)
		return nil
	}
	c, n := lookup(o.args)
	if c == nil || n != len(o.args) {
		if g := group(o.args); len(g) > 0 {
			writeGroupHelp(o.stdout, strings.Join(o.args, " "), g)
			return nil
		}
		return usageErrorf("no command %q (run ferry help)", strings.Join(o.args, " "))
	}
	writeCommandHelp(o.stdout, c)
	return nil
}

const intro = `ferry: start MCP servers from the configuration files you already have,
list and call their tools, resources and prompts, and trace the wire.
`

const serversText = `A server without a configuration file:
  ferry tools -- npx -y @modelcontextprotocol/server-everything
  ferry tools https://example.com/mcp --header 'Authorization: Bearer TOKEN'

Without --config, ferry reads every file it finds among: ./.mcp.json,
./mcp-servers.json, ./.cursor/mcp.json, ./.vscode/mcp.json, ~/.claude.json,
Claude Desktop's claude_desktop_config.json, ~/.cursor/mcp.json, Windsurf's
~/.codeium/windsurf/mcp_config.json, VS Code's user mcp.json, Cline's settings
and ~/.gemini/settings.json (the first definition of a name wins). The files
of the working folder start servers only once you trust the folder: ferry asks
at a terminal and remembers; scripts pass --trust-folder.
`

// agentText is "ferry help agent": the settings of ferry run and ferry
// chat in a configuration file.
const agentText = `ferry run and ferry chat read the "agent" member of a configuration file,
next to "mcpServers"; flags given on the command line win:

  "agent": {
    "model": "anthropic/claude-sonnet-4-5",   PROVIDER/MODEL (--model)
    "approval": "ask",                         ask, auto, plan or deny (--approval)
    "allow": ["memory__read_graph", "*__search_*"],   tools run without asking
    "deny": ["*__delete_*"],                   tools never run
    "sampling": {"allow": ["everything"], "deny": []},   servers' sampling requests
    "system": "...",                           the system prompt (--system)
    "maxSteps": 0, "maxTokens": 0, "maxResultBytes": 0, "contextTokens": 0,   limits, 0 the default
    "maxSamplingTokens": 0, "maxToolBytes": 0, "maxServerToolBytes": 0,
    "maxResultTokens": 8000, "resultTokens": {"github": 20000, "github__get_file": 50000},
                    a tool result's budget in tokens (and a server's, a tool's): over it the
                    model gets its head and tail, and reads the rest, kept whole in a file of
                    results/ in ferry's state directory, with results__read (maxResultBytes:
                    the same in bytes, as before)
    "toolSearch": {"tools": 40, "tokens": 10000},   above either, the model searches the
                    tools (tools__search, tools__load) instead of getting every schema; -1: never
    "providers": {
      "openai":    {"apiKey": "${OPENAI_API_KEY}", "baseURL": "https://api.openai.com/v1"},
      "anthropic": {"apiKey": "${ANTHROPIC_API_KEY}"},
      "ollama":    {"baseURL": "http://127.0.0.1:11434/v1"}
    }
  }

providers.NAME sets a provider's apiKey and baseURL; ${VAR} takes them from the
environment, and without apiKey the provider's own variable is read
(OPENAI_API_KEY, ANTHROPIC_API_KEY, OLLAMA_API_KEY...). baseURL ends in /v1 for
OpenAI and the compatible endpoints, and is the host for Anthropic; --base-url
overrides the model's. Providers: ` + "openai, anthropic, ollama, lmstudio, vllm, llamacpp,\ndeepseek, dashscope, openrouter" + `; another OpenAI-compatible endpoint is
openai/MODEL with its baseURL. Tool names are SERVER__TOOL, as the model sees them.

Approval: deny runs no tool; then the deny list refuses; then the permissions
kept for the project (ferry chat's /permissions: always, ask or never for a
SERVER or a SERVER__TOOL, the tool's own first) in ferry/permissions of the
user's configuration directory, for the folder ferry runs in: never refuses,
plan runs only the tools annotated read-only (readOnlyHint) and tells the model
it refused the rest, always runs, ask asks (even in mode auto); then the allow
list runs; then the mode: auto runs, ask asks at a terminal and refuses elsewhere.
`

const exitText = `Exit codes:
  0 ok   1 usage or configuration error   2 other error   3 authentication refused
  4 server unreachable (failed to start, crashed, timed out)
  5 tool error (the tool's result says isError, or its task failed)
  6 protocol error (the server answered the request with a JSON-RPC error)
  7 not approved (ferry run: a tool call needed approval and there was no terminal to ask)
  130 interrupted (Ctrl-C)   143 terminated (SIGTERM)
`

// writeUsage writes the global help: the commands from the table, the
// global flags and the exit codes.
func writeUsage(w io.Writer) {
	fmt.Fprint(w, intro)
	fmt.Fprint(w, "\nUsage: ferry [flags] COMMAND [arguments]\n\nCommands:\n")
	var lines [][2]string
	for _, c := range commands {
		lines = append(lines, [2]string{strings.TrimSpace(c.name + " " + c.args), c.summary})
	}
	writeColumns(w, lines)
	fmt.Fprint(w, "\n"+serversText+"\nGlobal flags (anywhere before --):\n")
	fs := newFlagSet("ferry")
	(&cli{}).globalFlags(fs)
	writeFlags(w, fs)
	fmt.Fprint(w, "\n"+exitText+"\nRun \"ferry COMMAND --help\" for a command's flags and an example;\n\"ferry help agent\" for the settings of ferry run and ferry chat.\n")
}

// writeCommandHelp writes "ferry NAME --help".
func writeCommandHelp(w io.Writer, c *command) {
	usage := "ferry " + c.name
	if c.args != "" {
		usage += " " + c.args
	}
	fmt.Fprintf(w, "Usage: %s [flags]\n\n", usage)
	if c.summary != "" {
		fmt.Fprintf(w, "%s%s.\n", strings.ToUpper(c.summary[:1]), c.summary[1:])
	}
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.help, "\n"))
	}
	if own := c.ownFlags(); len(own) > 0 {
		fs := newFlagSet(c.name)
		for _, f := range own {
			fs.Var(f.Value, f.Name, f.Usage)
		}
		fmt.Fprint(w, "\nFlags:\n")
		writeFlags(w, fs)
	}
	if !c.noConfig {
		fmt.Fprint(w, "\nGlobal flags (ferry help): --config, --format, --trace, --trace-file, --timeout,\n--max-timeout, --connect-timeout, -v and the others; a server without a\nconfiguration file goes after -- (a command) or as a URL argument.\n")
	}
	if c.example != "" {
		fmt.Fprint(w, "\nExample:\n")
		for _, l := range strings.Split(strings.TrimRight(c.example, "\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

func writeGroupHelp(w io.Writer, name string, cmds []*command) {
	fmt.Fprintf(w, "Usage: ferry %s COMMAND [arguments]\n\nCommands:\n", name)
	var lines [][2]string
	for _, c := range cmds {
		lines = append(lines, [2]string{strings.TrimSpace(c.name + " " + c.args), c.summary})
	}
	writeColumns(w, lines)
}

// writeFlags lists the flags of fs: "--name VALUE", then the usage.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	var lines [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		name := dash + f.Name
		if value != "" && !isBool(f) {
			name += " " + value
		}
		lines = append(lines, [2]string{name, usage})
	})
	writeColumns(w, lines)
}

// writeColumns writes two columns, the second wrapped at 80 characters.
func writeColumns(w io.Writer, lines [][2]string) {
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	width = min(width, 30)
	for _, l := range lines {
		left := l[0]
		pad := width - len(left)
		if pad < 0 {
			fmt.Fprintf(w, "  %s\n", left)
			left, pad = "", width
		}
		text := wrap(l[1], 80-width-5)
		for i, t := range text {
			if i > 0 {
				left, pad = "", width
			}
			fmt.Fprintf(w, "  %s%s   %s\n", left, strings.Repeat(" ", pad), t)
		}
		if len(text) == 0 {
			fmt.Fprintf(w, "  %s\n", left)
		}
	}
}

func wrap(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > n {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
