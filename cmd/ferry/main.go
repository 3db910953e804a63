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
package main

import (
	"fmt"
	"io"
	"os"

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
	os.Exit(run(e, os.Args[1:]))
}

// env is what a run sees of the outside world, so that tests can fake a
// terminal.
type env struct {
	stdin                          io.Reader
	stdout, stderr                 io.Writer
	stdinTTY, stdoutTTY, stderrTTY bool
	width                          func() int
}

// Exit codes, stable for scripts.
const (
	exitOK          = 0
	exitUsage       = 1 // bad flags or arguments, unknown server or tool, configuration errors
	exitError       = 2 // anything else (the server answered with an error)
	exitAuth        = 3 // the server refused the credentials (HTTP 401/403)
	exitUnreachable = 4 // a server could not be started or reached, crashed, or timed out
	exitTool        = 5 // the tool reported an error (isError), or the call failed
)

func run(e *env, args []string) int {
	o, err := parseFlags(e, args)
	if err != nil {
		if err == errHelp {
			fmt.Fprint(e.stdout, usage)
			return exitOK
		}
		return o.fail(err)
	}
	if o.showVersion {
		fmt.Fprintln(e.stdout, "ferry", version)
		return exitOK
	}
	if o.command == "" || o.command == "help" {
		fmt.Fprint(e.stdout, usage)
		if o.command == "" {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := commands[o.command]
	if !ok {
		return o.fail(usageErrorf("unknown command %q (run ferry help)", o.command))
	}
	o.term = newTerminal(e)
	if err := o.openTrace(); err != nil {
		return o.fail(err)
	}
	defer o.closeTrace()
	return o.finish(cmd(o))
}

var commands = map[string]func(*cli) error{
	"servers":   cmdServers,
	"tools":     cmdTools,
	"call":      cmdCall,
	"resources": cmdResources,
	"read":      cmdRead,
	"prompts":   cmdPrompts,
	"prompt":    cmdPrompt,
	"serve":     cmdServe,
	"proxy":     cmdProxy,
	"run":       func(o *cli) error { return cmdRun(background(), o, &o.agentFlags) },
	"chat":      func(o *cli) error { return cmdChat(background(), o, &o.agentFlags) },
	"tasks":     cmdTasks,
}

const usage = `ferry: start MCP servers from the configuration files you already have,
list and call their tools, resources and prompts, and trace the wire.

Usage:
  ferry [flags] servers                      status, era, protocol version, tools, connect time
  ferry [flags] tools [SERVER]               the tools of every server, or of one
  ferry [flags] call SERVER.TOOL [k=v ...]   call a tool (values coerced by its input schema;
                                             k:=JSON for a raw JSON value)
  ferry [flags] call --task SERVER.TOOL ...  let the server run the call as a task: its status
                                             as it changes, then the result; Ctrl-C asks
                                             whether to cancel it or leave it running
  ferry [flags] tasks SERVER [TASKID]        a server's tasks (2025-11-25), or one task's
                                             status or result (--wait: wait for it)
  ferry [flags] resources [SERVER]           resources and resource templates
  ferry [flags] read URI                     read a resource (--server to pick the server)
  ferry [flags] prompts [SERVER]             prompts
  ferry [flags] prompt [SERVER.]NAME [k=v]   get a prompt
  ferry [flags] serve [-- CMD ARGS]          serve the servers over HTTP: all at /mcp,
                                             each at /servers/NAME/mcp (and /sse)
  ferry [flags] proxy URL|NAME               a stdio MCP server that forwards to one server
  ferry [flags] run -p PROMPT                one turn of a model on the servers' tools: the
                                             answer, or with --format json every call and the usage
  ferry [flags] chat                         a conversation with a model that uses the servers' tools

A server without a configuration file:
  ferry tools -- npx -y @modelcontextprotocol/server-everything
  ferry tools https://example.com/mcp --header 'Authorization: Bearer TOKEN'

Without --config, ferry reads every file it finds among: ./.mcp.json,
./mcp-servers.json, ./.cursor/mcp.json, ./.vscode/mcp.json, ~/.claude.json,
Claude Desktop's claude_desktop_config.json, ~/.cursor/mcp.json, Windsurf's
~/.codeium/windsurf/mcp_config.json, VS Code's user mcp.json, Cline's settings
and ~/.gemini/settings.json (the first definition of a name wins).

Flags (anywhere before --):
  --config FILE         configuration file (repeatable)
  --format table|json   output format (default: table on a terminal, json otherwise)
  --args JSON|-|@FILE   tool arguments as a JSON object; - reads stdin
  --server NAME         the server for read and prompt
  --env K=V             environment of an ad-hoc stdio server (repeatable)
  --cwd DIR             working directory of an ad-hoc stdio server
  --header 'K: V'       HTTP header of an ad-hoc URL server (repeatable)
  --sse                 the ad-hoc URL speaks the HTTP+SSE transport (2024-11-05)
  --trace               every JSON-RPC message on stderr: direction, id, method,
                        size, milliseconds to the answer
  --trace-file FILE     the same as NDJSON, with each message in full
  --timeout D           request timeout, reset by progress (default 60s)
  --max-timeout D       bound on a request whatever its progress (default 10m)
  --connect-timeout D   bound on starting a server and the handshake (default 60s)
  --protocol VERSION    pin a protocol revision (default: detect the era)
  --prefix MODE         aggregated tool names: always, on-conflict, never (default always)
  --separator S         between server and tool in aggregated names (default __)
  --root DIR            offer DIR to servers as a root (repeatable)
  --log-level LEVEL     ask servers for log messages at LEVEL and show them
  --model PROVIDER/MODEL  run, chat: the model (or FERRY_MODEL, or the configuration's
                        "agent" settings): openai/gpt-4o, anthropic/claude-sonnet-4-5,
                        ollama/llama3.2, deepseek/..., dashscope/qwen-plus, ...
  --base-url URL        run, chat: the provider's address (OpenAI's ends in /v1)
  --approval MODE       run, chat: ask (at a terminal), auto or deny tool calls and
                        sampling requests (the configuration's allow/deny lists first)
  -p PROMPT             run: the prompt (- reads stdin)
  --system TEXT         run, chat: the system prompt
  --max-steps N         run, chat: model requests per turn (default 25)
  --max-tokens N        run, chat: tokens per turn (default: no limit)
  --time-limit D        run, chat: duration of a turn (default: no limit)
  --continue            chat: go on with the last conversation
  -v                    show each server's stages and stderr
  --version             print ferry's version

Flags of ferry serve:
  --addr HOST:PORT      where to listen (default 127.0.0.1:8000)
  --token-file FILE     bearer tokens clients must send, one per line (or
                        FERRY_GATEWAY_TOKENS); needed beyond loopback
  --insecure-no-auth    listen beyond loopback without inbound auth
  --isolate SERVER      a process per client session for SERVER (* for all);
                        or "isolation": "session" in its entry
  --allow-origin O, --allow-host H   browser origins and Host names to accept too
  --drain D             time the requests in flight get to finish (default 10s)
  --max-sessions N, --max-session-processes N   bounds (10000, 100)
  --log-format text|json, --log-requests, --no-metrics
  SIGHUP reads the configuration again; SIGTERM stops in order. Traces go
  over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set. --max-timeout bounds a
  call to a server (--timeout, an idle bound, is left to the clients).

Exit codes:
  0 ok   1 usage or configuration error   2 other error   3 authentication refused
  4 server unreachable (failed to start, crashed, timed out)   5 tool error
`
