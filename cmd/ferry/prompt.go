package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
)

var promptCommand = &command{
	name:    "prompt",
	args:    "[SERVER.]NAME [k=v ...]",
	summary: "get a prompt",
	help:    "Gets a prompt with its arguments and prints its messages.",
	example: "ferry prompt everything.args-prompt city=Paris state=TX",
	setup: func(fs *flag.FlagSet, _ *cli) runFunc {
		server := fs.String("server", "", "the `SERVER` to ask")
		return func(ctx context.Context, o *cli) error { return cmdPrompt(ctx, o, *server) }
	},
}

func cmdPrompt(ctx context.Context, o *cli, server string) error {
	if len(o.args) == 0 {
		return usageErrorf("prompt needs a name: ferry prompt [SERVER.]NAME [k=v ...]")
	}
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	srvName, name, ok := splitTarget(o.args[0], o.separator, servers)
	if server != "" {
		srvName, name, ok = server, o.args[0], true
	}
	args := map[string]string{}
	for _, kv := range o.args[1:] {
		k, v, found := strings.Cut(kv, "=")
		if !found || k == "" {
			return usageErrorf("argument %q: want NAME=VALUE", kv)
		}
		args[k] = v
	}
	var names []string
	if ok {
		names = []string{srvName}
	}
	sess, err := o.startServers(ctx, servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	if !ok {
		// NAME alone: the server that has the prompt.
		var owners []string
		// Errors aside: a server that cannot list its prompts has none to
		// offer here.
		lists, _ := listAll(ctx, sess, func(c *client.Client) bool { return c.ServerCapabilities().Prompts != nil },
			func(c *client.Client) ([]protocol.Prompt, error) { return client.Collect(c.Prompts(ctx)) })
		for _, l := range lists {
			for _, p := range l.items {
				if p.Name == name {
					owners = append(owners, l.server)
				}
			}
		}
		if len(owners) != 1 {
			return usageErrorf("%d servers have a prompt named %q; write SERVER.%s", len(owners), name, name)
		}
		srvName = owners[0]
	} else if sess.startErr != nil {
		return sess.startErr
	}
	srv, err := sess.Server(srvName)
	if err != nil {
		return err
	}
	var res *protocol.GetPromptResult
	err = srv.Do(ctx, func(c *client.Client) error {
		var err error
		res, err = c.GetPrompt(ctx, name, args)
		return err
	})
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	if res.Description != "" {
		fmt.Fprintf(o.stdout, "# %s\n", o.text(res.Description))
	}
	for _, m := range res.Messages {
		fmt.Fprintf(o.stdout, "[%s]\n", o.text(string(m.Role)))
		o.printContent([]protocol.Content{m.Content})
	}
	return nil
}
