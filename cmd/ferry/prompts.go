package main

import (
	"context"
	"strings"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
)

var promptsCommand = &command{
	name:    "prompts",
	args:    "[SERVER]",
	summary: "prompts",
	help:    "Lists the prompts of every server (or of one) with their arguments (? marks an optional one).",
	example: "ferry prompts",
	setup:   listing(cmdPrompts, "prompts/list"),
}

type promptOut struct {
	Server string `json:"server"`
	protocol.Prompt
}

func cmdPrompts(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	sess, err := o.startOneOrAll(ctx, servers, "prompts")
	if err != nil {
		return err
	}
	defer sess.Close()
	lists, err := listAll(ctx, sess, func(c *client.Client) bool { return c.ServerCapabilities().Prompts != nil },
		func(c *client.Client) ([]protocol.Prompt, error) { return client.Collect(c.Prompts(ctx)) })
	var prompts []promptOut
	for _, l := range lists {
		for _, p := range l.items {
			prompts = append(prompts, promptOut{l.server, p})
		}
	}
	if o.json {
		if prompts == nil {
			prompts = []promptOut{}
		}
		if perr := o.printJSON(map[string]any{"prompts": prompts}); perr != nil {
			return perr
		}
		return err
	}
	t := o.table("PROMPT", "ARGUMENTS", "DESCRIPTION")
	for _, p := range prompts {
		var args []string
		for _, a := range p.Arguments {
			if a.Required {
				args = append(args, a.Name)
			} else {
				args = append(args, a.Name+"?")
			}
		}
		t.add(p.Server+"."+p.Name, strings.Join(args, " "), p.Description)
	}
	t.flush()
	return err
}
