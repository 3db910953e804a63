package main

import (
	"errors"
	"fmt"
	"strings"
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

type promptOut struct {
	Server string `json:"server"`
	protocol.Prompt
}

// each runs f for every ready server, concurrently, and joins the
// errors (servers that did not start included).
func (sess *session) each(f func(s *host.Server, c *client.Client) error) error {
	servers := sess.Servers()
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s.Status().State != host.Ready {
			continue
		}
		wg.Go(func() { errs[i] = s.Do(background(), func(c *client.Client) error { return f(s, c) }) })
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

func cmdResources(o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	names, err := o.oneServerArg("resources")
	if err != nil {
		return err
	}
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	var mu sync.Mutex
	var resources []resourceOut
	var templates []templateOut
	err = sess.each(func(s *host.Server, c *client.Client) error {
		if c.ServerCapabilities().Resources == nil {
			return nil
		}
		rs, err := client.Collect(c.Resources(background()))
		if err != nil && !methodMissing(err) {
			return err
		}
		ts, err := client.Collect(c.ResourceTemplates(background()))
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

func cmdRead(o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	if len(o.args) != 1 {
		return usageErrorf("read needs one URI: ferry read URI [--server NAME]")
	}
	uri := o.args[0]
	var names []string
	if o.server != "" {
		names = []string{o.server}
	}
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	srv, err := sess.resourceServer(uri)
	if err != nil {
		return err
	}
	var res *protocol.ReadResourceResult
	err = srv.Do(background(), func(c *client.Client) error {
		var err error
		res, err = c.ReadResource(background(), uri)
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
func (sess *session) resourceServer(uri string) (*host.Server, error) {
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
		s.Do(background(), func(c *client.Client) error {
			if c.ServerCapabilities().Resources == nil {
				return nil
			}
			withResources = append(withResources, s)
			for r, err := range c.Resources(background()) {
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

func cmdPrompts(o *cli) error {
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	names, err := o.oneServerArg("prompts")
	if err != nil {
		return err
	}
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	var mu sync.Mutex
	var prompts []promptOut
	err = sess.each(func(s *host.Server, c *client.Client) error {
		if c.ServerCapabilities().Prompts == nil {
			return nil
		}
		ps, err := client.Collect(c.Prompts(background()))
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

func cmdPrompt(o *cli) error {
	if len(o.args) == 0 {
		return usageErrorf("prompt needs a name: ferry prompt [SERVER.]NAME [k=v ...]")
	}
	servers, err := o.loadServers()
	if err != nil {
		return err
	}
	srvName, name, ok := splitTarget(o.args[0], o.separator, servers)
	if o.server != "" {
		srvName, name, ok = o.server, o.args[0], true
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
	sess, err := o.startServers(servers, names...)
	if err != nil {
		return err
	}
	defer sess.Close()
	if !ok {
		// NAME alone: the server that has the prompt.
		var owners []string
		sess.each(func(s *host.Server, c *client.Client) error {
			for p, err := range c.Prompts(background()) {
				if err != nil {
					return err
				}
				if p.Name == name {
					owners = append(owners, s.Name())
				}
			}
			return nil
		})
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
	err = srv.Do(background(), func(c *client.Client) error {
		var err error
		res, err = c.GetPrompt(background(), name, args)
		return err
	})
	if err != nil {
		return err
	}
	if o.json {
		return o.printJSON(res)
	}
	if res.Description != "" {
		fmt.Fprintf(o.stdout, "# %s\n", res.Description)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(o.stdout, "[%s]\n", m.Role)
		o.printContent([]protocol.Content{m.Content})
	}
	return nil
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
