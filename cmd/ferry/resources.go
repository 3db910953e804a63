package main

import (
	"context"
	"errors"
	"sync"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

type resourceOut struct {
	Server string `json:"server"`
	protocol.Resource
}

type templateOut struct {
	Server string `json:"server"`
	protocol.ResourceTemplate
}

var resourcesCommand = &command{
	name:    "resources",
	args:    "[SERVER]",
	summary: "resources and resource templates",
	help: `Lists the resources and resource templates of every server (or of one).
Read one with ferry read URI.`,
	example: "ferry resources everything",
	setup:   listing(cmdResources, "resources/list", "resources/templates/list"),
}

// listed is what one server listed.
type listed[T any] struct {
	server string
	items  []T
}

// listAll runs list on every ready server that has the capability,
// concurrently, and returns what each listed, in the servers' order; a
// server that does not implement the method is skipped. The error joins
// the others (servers that did not start included).
func listAll[T any](ctx context.Context, sess *session, has func(*client.Client) bool, list func(*client.Client) ([]T, error)) ([]listed[T], error) {
	servers := sess.Servers()
	lists := make([]listed[T], len(servers))
	err := sess.each(ctx, func(i int, s *host.Server, c *client.Client) error {
		if !has(c) {
			return nil
		}
		items, err := list(c)
		if err != nil && !methodMissing(err) {
			return err
		}
		lists[i] = listed[T]{s.Name(), items}
		return nil
	})
	return lists, err
}

// each runs f for every ready server (i its index in sess.Servers()),
// concurrently, and joins the errors (servers that did not start
// included).
func (sess *session) each(ctx context.Context, f func(i int, s *host.Server, c *client.Client) error) error {
	servers := sess.Servers()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s.Status().State != host.Ready {
			continue
		}
		wg.Go(func() { errs[i] = s.Do(ctx, func(c *client.Client) error { return f(i, s, c) }) })
	}
	wg.Wait()
	return errors.Join(append([]error{sess.startErr}, errs...)...)
}

// methodMissing reports a server that does not implement a list method,
// which a listing of everything skips.
func methodMissing(err error) bool {
	var rpc *jsonrpc.Error
	return errors.As(err, &rpc) && rpc.Code == jsonrpc.CodeMethodNotFound
}

func cmdResources(ctx context.Context, o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	sess, err := o.startOneOrAll(ctx, servers, "resources")
	if err != nil {
		return err
	}
	defer sess.Close()
	has := func(c *client.Client) bool { return c.ServerCapabilities().Resources != nil }
	rlists, rerr := listAll(ctx, sess, has,
		func(c *client.Client) ([]protocol.Resource, error) { return client.Collect(c.Resources(ctx)) })
	tlists, terr := listAll(ctx, sess, has,
		func(c *client.Client) ([]protocol.ResourceTemplate, error) {
			return client.Collect(c.ResourceTemplates(ctx))
		})
	err = errors.Join(rerr, terr)
	var resources []resourceOut
	for _, l := range rlists {
		for _, r := range l.items {
			resources = append(resources, resourceOut{l.server, r})
		}
	}
	var templates []templateOut
	for _, l := range tlists {
		for _, t := range l.items {
			templates = append(templates, templateOut{l.server, t})
		}
	}
	if o.json {
		if resources == nil {
			resources = []resourceOut{}
		}
		if templates == nil {
			templates = []templateOut{}
		}
		if perr := o.printJSON(map[string]any{"resources": resources, "resourceTemplates": templates}); perr != nil {
			return perr
		}
		return err
	}
	t := o.table("SERVER", "URI", "NAME", "MIME TYPE", "DESCRIPTION")
	for _, r := range resources {
		t.add(r.Server, r.URI, r.Name, dash(r.MIMEType), r.Description)
	}
	for _, r := range templates {
		t.add(r.Server, r.URITemplate, r.Name+" (template)", dash(r.MIMEType), r.Description)
	}
	t.flush()
	return err
}
