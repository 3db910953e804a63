package main

import (
	"context"
	"errors"
	"flag"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

var readCommand = &command{
	name:    "read",
	args:    "URI",
	summary: "read a resource",
	help: `Reads a resource and prints its text (a summary of binary content at a
terminal; the whole result as JSON otherwise). The server is the one that lists
the URI or has a template that matches it; --server picks it.`,
	example: `ferry read demo://resource/static/document/startup.md
ferry read --server memory memory://knowledge-graph`,
	setup: func(fs *flag.FlagSet, _ *cli) runFunc {
		server := fs.String("server", "", "the `SERVER` to read from")
		return func(ctx context.Context, o *cli) error { return cmdRead(ctx, o, *server) }
	},
}

func cmdRead(ctx context.Context, o *cli, server string) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	if len(o.args) != 1 {
		return usageErrorf("read needs one URI: ferry read URI [--server NAME]")
	}
	uri := o.args[0]
	var names []string
	if server != "" {
		names = []string{server}
	}
	sess, err := o.startServers(ctx, servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	srv, err := sess.resourceServer(ctx, uri)
	if err != nil {
		return err
	}
	var res *protocol.ReadResourceResult
	err = srv.Do(ctx, func(c *client.Client) error {
		var err error
		res, err = c.ReadResource(ctx, uri)
		return err
	})
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	for _, rc := range res.Contents {
		o.printResourceContents(rc)
	}
	return nil
}

// resourceServer picks the server to read uri from: the only one that
// started, else the one that lists it, else the only one with resources.
func (sess *session) resourceServer(ctx context.Context, uri string) (*host.Server, error) {
	var ready []*host.Server
	for _, s := range sess.Servers() {
		if s.Status().State == host.Ready {
			ready = append(ready, s)
		}
	}
	switch len(ready) {
	case 0:
		if sess.startErr != nil {
			return nil, sess.startErr
		}
		return nil, &host.Error{Kind: host.KindUnreachable, Err: errors.New("no server is running")}
	case 1:
		return ready[0], nil
	}
	var withResources []*host.Server
	for _, s := range ready {
		var found bool
		s.Do(ctx, func(c *client.Client) error {
			if c.ServerCapabilities().Resources == nil {
				return nil
			}
			withResources = append(withResources, s)
			for r, err := range c.Resources(ctx) {
				if err != nil {
					return err
				}
				if r.URI == uri {
					found = true
					break
				}
			}
			return nil
		})
		if found {
			return s, nil
		}
	}
	if len(withResources) == 1 {
		return withResources[0], nil
	}
	return nil, usageErrorf("no server lists %s; say which to ask with --server", uri)
}
