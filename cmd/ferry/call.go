package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

var callCommand = &command{
	name:    "call",
	args:    "SERVER.TOOL [k=v ...]",
	summary: "call a tool",
	help: `Calls a tool and prints its result: text as it is at a terminal, the whole
result as JSON otherwise. SERVER. may be left out when one server has the tool;
SERVER__TOOL (the aggregated name) works too.

Each k=v is coerced by the tool's input schema: numbers, integers, booleans,
arrays (JSON, or items separated by commas) and objects (JSON); k:=JSON takes
the value as raw JSON. --args gives the arguments as one JSON object, which the
k=v pairs then amend. Progress is shown at a terminal; a server's questions
(elicitation) are asked there too.`,
	example: `ferry call everything.add a=1 b=2
ferry call memory.open_nodes names=ferry,other
echo '{"path": "/tmp"}' | ferry call filesystem.list_directory --args -`,
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		fs.BoolVar(&o.task, "task", false, "let the server run the call as a task: its status as it changes, then the result; Ctrl-C asks whether to cancel it or leave it running")
		args := fs.String("args", "", "tool arguments as one object, `JSON|-|@FILE`: inline, - for stdin, @ for a file")
		fs.StringVar(&o.outputDir, "output-dir", "", "save images, audio and blobs of the result as files in `DIR` (shown by their paths)")
		return func(ctx context.Context, o *cli) error { return cmdCall(ctx, o, *args) }
	},
}

// splitTarget splits SERVER.NAME (or SERVER__NAME, the aggregated form)
// against the configured server names, longest name first. With a single
// server, NAME alone is enough.
func splitTarget(target, sep string, servers []*config.Server) (server, name string, ok bool) {
	best := ""
	for _, s := range servers {
		for _, j := range []string{".", sep} {
			if strings.HasPrefix(target, s.Name+j) && len(s.Name) > len(best) && len(target) > len(s.Name+j) {
				best, name = s.Name, target[len(s.Name+j):]
			}
		}
	}
	if best != "" {
		return best, name, true
	}
	if len(servers) == 1 {
		return servers[0].Name, target, true
	}
	return "", target, false
}

func cmdCall(ctx context.Context, o *cli, argsJSON string) error {
	if len(o.args) == 0 {
		return usageErrorf("call needs a tool: ferry call SERVER.TOOL [k=v ...]")
	}
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	targetArg, pairs := o.args[0], o.args[1:]
	srvName, toolName, ok := splitTarget(targetArg, o.separator, servers)
	var names []string
	if ok {
		names = []string{srvName}
	}
	sess, err := o.startServers(ctx, servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	var srv *host.Server
	if ok {
		srv, _ = sess.Server(srvName)
		if sess.startErr != nil {
			return sess.startErr
		}
	} else {
		// TOOL alone: the one server that has it.
		tools, _ := sess.Tools(ctx)
		var owners []host.Tool
		for _, t := range tools {
			if t.Tool.Name == toolName || t.Name == toolName {
				owners = append(owners, t)
			}
		}
		switch len(owners) {
		case 0:
			if sess.startErr != nil {
				return sess.startErr
			}
			return &host.Error{Kind: host.KindUnknown, Err: fmt.Errorf("no server has a tool named %q", toolName)}
		case 1:
			srv, _ = sess.Server(owners[0].Server)
			toolName = owners[0].Tool.Name
		default:
			var where []string
			for _, t := range owners {
				where = append(where, t.Server+"."+t.Tool.Name)
			}
			return usageErrorf("several servers have a tool named %q: %s", toolName, strings.Join(where, ", "))
		}
	}
	if !srv.Allowed(toolName) {
		return &host.Error{Server: srv.Name(), Kind: host.KindNotAllowed,
			Err: fmt.Errorf("tool %q is not allowed by the entry's allowedTools/blockedTools", toolName)}
	}
	tools, err := srv.Tools(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(t protocol.Tool) bool { return t.Name == toolName })
	if i < 0 {
		var have []string
		for _, t := range tools {
			have = append(have, t.Name)
		}
		return &host.Error{Server: srv.Name(), Kind: host.KindUnknown,
			Err: fmt.Errorf("no tool named %q (tools: %s)", toolName, strings.Join(have, ", "))}
	}
	args, err := toolArguments(tools[i].InputSchema, argsJSON, o.stdin, pairs)
	if err != nil {
		var ue *usageError
		if errors.As(err, &ue) {
			return usageErrorf("%s: %v (it takes: %s; ferry tools %s %s shows them)", o.toolName(srv.Name(), toolName), err,
				signature(tools[i].InputSchema), srv.Name(), toolName)
		}
		return err
	}
	label := o.toolName(srv.Name(), toolName)
	ctx = client.WithProgress(ctx, func(p *protocol.ProgressParams) { o.term.showProgress(label, p) })
	var res *protocol.CallToolResult
	if o.task {
		res, err = o.callTask(ctx, srv, toolName, args)
	} else {
		res, err = srv.CallTool(ctx, &protocol.CallToolParams{Name: toolName, Arguments: args})
	}
	o.term.clearProgress()
	if err != nil {
		return callFailure(srv.Name(), toolName, err)
	}
	shown := *res
	if shown.Content, err = o.withSaved(res.Content); err != nil {
		return err
	}
	if o.json {
		if err := o.printJSON(res); err != nil {
			return err
		}
	} else {
		o.printResult(&shown)
	}
	if res.IsError {
		return &toolError{server: srv.Name(), tool: toolName, text: firstText(res.Content)}
	}
	return nil
}

// callFailure names the server and the tool of a tools/call that failed
// as a task (the tool's failure, exit code 5) or that the server answered
// with a JSON-RPC error: a protocol error (exit code 6), not the tool's.
func callFailure(server, tool string, err error) error {
	var ce *callError
	var rpc *jsonrpc.Error
	switch {
	case errors.As(err, &ce):
		return &callError{fmt.Errorf("server %q: tools/call %s: %w", server, tool, err)}
	case errors.As(err, &rpc):
		return fmt.Errorf("server %q answered tools/call %s with a protocol error: %w", server, tool, err)
	}
	return err
}

// printResult shows a tool's result: its content, and its structured
// content when no text block already carries it.
func (o *cli) printResult(res *protocol.CallToolResult) {
	if res.IsError {
		// The error text goes to stderr with the failure.
		var rest []protocol.Content
		for _, c := range res.Content {
			if c.Type != protocol.ContentText {
				rest = append(rest, c)
			}
		}
		o.printContent(rest)
	} else {
		o.printContent(res.Content)
	}
	// Structured content is shown when no text block stands for it.
	if len(res.StructuredContent) == 0 || slices.ContainsFunc(res.Content, func(c protocol.Content) bool { return c.Type == protocol.ContentText }) {
		return
	}
	v := jsontext.Value(slices.Clone(res.StructuredContent))
	if v.Indent(jsontext.WithIndent("  ")) == nil {
		fmt.Fprintf(o.stdout, "%s\n", o.jsonText(v))
	}
}

func firstText(c []protocol.Content) string {
	var parts []string
	for _, b := range c {
		if b.Type == protocol.ContentText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
