package main

import (
	"errors"
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

// toolOut is a tool in `ferry tools --format json`.
type toolOut struct {
	Server        string `json:"server"`
	QualifiedName string `json:"qualifiedName"`
	protocol.Tool
}

// oneServerArg returns the optional SERVER argument of tools, resources
// and prompts.
func (o *cli) oneServerArg(cmd string) ([]string, error) {
	switch len(o.args) {
	case 0:
		return nil, nil
	case 1:
		return o.args, nil
	}
	return nil, usageErrorf("%s takes at most one argument, a server name", cmd)
}

func cmdTools(o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	names, err := o.oneServerArg("tools")
	if err != nil {
		return err
	}
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	tools, listErr := sess.Tools(background())
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
				name = t.Server + "." + name
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

func manyServers(tools []host.Tool) bool {
	for _, t := range tools {
		if t.Server != tools[0].Server {
			return true
		}
	}
	return false
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

func cmdCall(o *cli) error {
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
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	ctx := background()
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
	args, err := toolArguments(tools[i].InputSchema, o.argsJSON, o.stdin, pairs)
	if err != nil {
		return err
	}
	label := srv.Name() + "." + toolName
	ctx = client.WithProgress(ctx, func(p *protocol.ProgressParams) { o.term.showProgress(label, p) })
	var res *protocol.CallToolResult
	if o.task {
		res, err = o.callTask(ctx, srv, toolName, args)
	} else {
		res, err = srv.CallTool(ctx, &protocol.CallToolParams{Name: toolName, Arguments: args})
	}
	o.term.clearProgress()
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return &callError{fmt.Errorf("server %q: tools/call %s: %w", srv.Name(), toolName, err)}
		}
		return err
	}
	if o.json {
		if err := o.printJSON(res); err != nil {
			return err
		}
	} else {
		o.printResult(res)
	}
	if res.IsError {
		return &toolError{server: srv.Name(), tool: toolName, text: firstText(res.Content)}
	}
	return nil
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
		fmt.Fprintf(o.stdout, "%s\n", v)
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
