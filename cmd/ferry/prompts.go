package main

import (
	"context"
	"strings"
	"sync"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
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
	names, err := o.oneServerArg("prompts")
	if err != nil {
		return err
	}
	sess, err := o.startServers(ctx, servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	var mu sync.Mutex
	var prompts []promptOut
	err = sess.each(ctx, func(s *host.Server, c *client.Client) error {
		if c.ServerCapabilities().Prompts == nil {
			return nil
		}
		ps, err := client.Collect(c.Prompts(ctx))
		if err != nil && !methodMissing(err) {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, p := range ps {
			prompts = append(prompts, promptOut{s.Name(), p})
		}
		return nil
	})
	order := serverOrder(sess)
	sortBy(prompts, func(p promptOut) int { return order[p.Server] })
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
