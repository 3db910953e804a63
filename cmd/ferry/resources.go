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

// each runs f for every ready server, concurrently, and joins the
// errors (servers that did not start included).
func (sess *session) each(ctx context.Context, f func(s *host.Server, c *client.Client) error) error {
	servers := sess.Servers()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s.Status().State != host.Ready {
			continue
		}
		wg.Go(func() { errs[i] = s.Do(ctx, func(c *client.Client) error { return f(s, c) }) })
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
	names, err := o.oneServerArg("resources")
	if err != nil {
		return err
	}
	sess, err := o.startServers(ctx, servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	var mu sync.Mutex
	var resources []resourceOut
	var templates []templateOut
	err = sess.each(ctx, func(s *host.Server, c *client.Client) error {
		if c.ServerCapabilities().Resources == nil {
			return nil
		}
		rs, err := client.Collect(c.Resources(ctx))
		if err != nil && !methodMissing(err) {
			return err
		}
		ts, err := client.Collect(c.ResourceTemplates(ctx))
		if err != nil && !methodMissing(err) {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range rs {
			resources = append(resources, resourceOut{s.Name(), r})
		}
		for _, t := range ts {
			templates = append(templates, templateOut{s.Name(), t})
		}
		return nil
	})
	order := serverOrder(sess)
	sortBy(resources, func(r resourceOut) int { return order[r.Server] })
	sortBy(templates, func(r templateOut) int { return order[r.Server] })
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

func serverOrder(sess *session) map[string]int {
	m := map[string]int{}
	for i, s := range sess.Servers() {
		m[s.Name()] = i
	}
	return m
}

// sortBy sorts stably by key.
func sortBy[T any](s []T, key func(T) int) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && key(s[j]) < key(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
