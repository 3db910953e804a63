package main

import (
	"context"
	"errors"
	"flag"
	"strings"

	"github.com/yosida95/uritemplate/v3"

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
	setup: func(fs *flag.FlagSet, o *cli) runFunc {
		server := fs.String("server", "", "the `SERVER` to read from")
		fs.StringVar(&o.outputDir, "output-dir", "", "save binary contents (blobs) as files in `DIR` (shown by their paths)")
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
	blocks := make([]protocol.Content, len(res.Contents))
	for i := range res.Contents {
		blocks[i] = protocol.Content{Type: protocol.ContentResource, Resource: &res.Contents[i]}
	}
	shown, err := o.withSaved(blocks)
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	o.printContent(shown)
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
	var withResources, listing, matching []*host.Server
	for _, s := range ready {
		lists, matches, has := offers(ctx, s, uri)
		if has {
			withResources = append(withResources, s)
		}
		if lists {
			listing = append(listing, s)
		} else if matches {
			matching = append(matching, s)
		}
	}
	for _, found := range [][]*host.Server{listing, matching, withResources} {
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		}
		return nil, usageErrorf("several servers could have %s: %s; say which with --server", uri, serverList(found))
	}
	return nil, usageErrorf("no server lists %s or has a template that matches it, and none has resources; say which to ask with --server", uri)
}

// offers reports whether a server lists uri among its resources, has a
// resource template that matches it, and has resources at all.
func offers(ctx context.Context, s *host.Server, uri string) (lists, matches, has bool) {
	s.Do(ctx, func(c *client.Client) error {
		if c.ServerCapabilities().Resources == nil {
			return nil
		}
		has = true
		for r, err := range c.Resources(ctx) {
			if err != nil {
				break
			}
			if r.URI == uri {
				lists = true
				return nil
			}
		}
		for t, err := range c.ResourceTemplates(ctx) {
			if err != nil {
				break
			}
			if tmpl, err := uritemplate.New(t.URITemplate); err == nil && tmpl.Match(uri) != nil {
				matches = true
				return nil
			}
		}
		return nil
	})
	return lists, matches, has
}

func serverList(servers []*host.Server) string {
	var names []string
	for _, s := range servers {
		names = append(names, s.Name())
	}
	return strings.Join(names, ", ")
}
