package main

import (
	"context"
	"flag"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
)

// cursorFlag is --cursor: set, even to "" (the first page), it asks for
// one page of a listing as the server sends it.
type cursorFlag struct {
	set   bool
	value string
}

func (c *cursorFlag) String() string     { return c.value }
func (c *cursorFlag) Set(v string) error { c.value, c.set = v, true; return nil }

// listing is the setup of tools, resources and prompts: their run
// function, or with --cursor one page of method.
func listing(run runFunc, methods ...string) func(*flag.FlagSet, *cli) runFunc {
	return func(fs *flag.FlagSet, _ *cli) runFunc {
		cursor := &cursorFlag{}
		fs.Var(cursor, "cursor", "one page of one server's list from `CURSOR` ('' for the first), as the server sends it, with its nextCursor")
		return func(ctx context.Context, o *cli) error {
			if !cursor.set {
				return run(ctx, o)
			}
			return cmdPage(ctx, o, cursor.value, methods)
		}
	}
}

// cmdPage prints one page of each method's list from one server.
func cmdPage(ctx context.Context, o *cli, cursor string, methods []string) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	server := ""
	switch {
	case len(o.args) == 1:
		server = o.args[0]
	case len(o.args) == 0 && len(servers) == 1:
		server = servers[0].Name
	default:
		return usageErrorf("--cursor pages one server's list: give the SERVER (configured: %s)", serverNames(servers))
	}
	sess, err := o.startServers(ctx, servers, server)
	if err != nil {
		return err
	}
	defer sess.Close()
	if sess.startErr != nil {
		return sess.startErr
	}
	srv, err := sess.Server(server)
	if err != nil {
		return err
	}
	var params any // the first page: no cursor at all
	if cursor != "" {
		params = map[string]any{"cursor": cursor}
	}
	pages := map[string]jsontext.Value{}
	for _, m := range methods {
		var page jsontext.Value
		err := srv.Do(ctx, func(c *client.Client) error {
			return c.CallMethod(ctx, m, params, &page)
		})
		if err != nil {
			return err
		}
		pages[m] = page
	}
	if len(methods) == 1 {
		return o.printJSON(pages[methods[0]])
	}
	return o.printJSON(pages)
}
