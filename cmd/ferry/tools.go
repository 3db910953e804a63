package main

import (
	"context"
	"strings"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

var toolsCommand = &command{
	name:    "tools",
	args:    "[SERVER [TOOL]]",
	summary: "the tools of every server, or of one; one tool in full",
	help: `Lists the tools of every configured server (or of one) as one table at a
terminal, with each tool's arguments (? marks an optional one), or as JSON
otherwise, with each tool's full input schema.

With a TOOL (or SERVER.TOOL), shows that tool in full: its whole
description, each argument with its type, bounds, choices, default and
description, its annotations, and its input and output schemas.`,
	example: `ferry tools
ferry tools everything weather
ferry tools everything --format json | jq '.tools[].qualifiedName'`,
	setup: listing(cmdTools, "tools/list"),
}

// toolOut is a tool in `ferry tools --format json`.
type toolOut struct {
	Server        string `json:"server"`
	QualifiedName string `json:"qualifiedName"`
	protocol.Tool
}

// startOneOrAll starts the server named by the optional SERVER argument
// of tools, resources and prompts, or every server.
func (o *cli) startOneOrAll(ctx context.Context, servers []*config.Server, cmd string) (*session, error) {
	if len(o.args) > 1 {
		return nil, usageErrorf("%s takes at most one argument, a server name", cmd)
	}
	return o.startServers(ctx, servers, o.args...)
}

func cmdTools(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	if len(o.args) == 2 || len(o.args) == 1 && strings.Contains(o.args[0], ".") && !hasServer(servers, o.args[0]) {
		return cmdToolDetail(ctx, o, servers)
	}
	sess, err := o.startOneOrAll(ctx, servers, "tools")
	if err != nil {
		return err
	}
	defer sess.Close()
	tools, listErr := sess.Tools(ctx)
	if len(tools) == 0 && (sess.startErr != nil || listErr != nil) {
		// Nothing to show: stdout stays empty, the error says why.
		if sess.startErr != nil {
			return sess.startErr
		}
		return listErr
	}
	if o.json {
		out := make([]toolOut, 0, len(tools))
		for _, t := range tools {
			out = append(out, toolOut{Server: t.Server, QualifiedName: t.Name, Tool: t.Tool})
		}
		if err := o.printJSON(map[string]any{"tools": out}); err != nil {
			return err
		}
	} else {
		many := manyServers(tools)
		tab := o.table("TOOL", "ARGUMENTS", "DESCRIPTION")
		for _, t := range tools {
			name := t.Tool.Name
			if many {
				name = o.toolName(t.Server, name)
			}
			tab.add(name, signature(t.Tool.InputSchema), t.Tool.Description)
		}
		tab.flush()
	}
	if sess.startErr != nil {
		return sess.startErr
	}
	return listErr
}

// toolName is how the command writes a server's tool everywhere it
// names one (the tables, progress, questions, errors): as the model, the
// allow and deny lists and the JSON output write it, SERVER__TOOL (with
// --separator's separator).
func (o *cli) toolName(server, tool string) string { return server + o.separator + tool }

func manyServers(tools []host.Tool) bool {
	for _, t := range tools {
		if t.Server != tools[0].Server {
			return true
		}
	}
	return false
}

func hasServer(servers []*config.Server, name string) bool {
	for _, s := range servers {
		if s.Name == name {
			return true
		}
	}
	return false
}
