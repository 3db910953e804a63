package gateway

import (
	"context"
	"iter"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
)

// lists are the prompts, resources and templates of a link's server,
// listed once per connection and again after the server says they changed.
// (Tools are cached by the host, which applies the entry's allowed and
// blocked tools.)
type lists struct {
	prompts   cached[protocol.Prompt]
	resources cached[protocol.Resource]
	templates cached[protocol.ResourceTemplate]
}

// cached is one list and the connection it was listed on.
type cached[T any] struct {
	items  []T
	client *client.Client // nil until listed
	gen    int            // bumped when the server says the list changed
}

func (ls *lists) invalidate(method string) {
	switch method {
	case protocol.NotificationPromptsListChanged:
		ls.prompts.client = nil
		ls.prompts.gen++
	case protocol.NotificationResourcesListChanged:
		ls.resources.client = nil
		ls.resources.gen++
		ls.templates.client = nil
		ls.templates.gen++
	}
}

// fetch returns a list of the link's server, from the cache when it was
// listed on the current connection. A server that does not announce the
// list has none.
func fetch[T any](ctx context.Context, l *link, pick func(*lists) *cached[T], has func(protocol.ServerCapabilities) bool,
	all func(*client.Client, context.Context) iter.Seq2[T, error]) ([]T, error) {
	c, err := l.client(ctx)
	if err != nil {
		return nil, err
	}
	if !has(c.ServerCapabilities()) {
		return nil, nil
	}
	l.mu.Lock()
	cc := pick(&l.lists)
	if cc.client == c {
		items := cc.items
		l.mu.Unlock()
		return items, nil
	}
	gen := cc.gen
	l.mu.Unlock()
	items, err := client.Collect(all(c, ctx))
	if err != nil {
		return nil, upstreamError(l.up.name, err)
	}
	l.mu.Lock()
	if cc.gen == gen {
		cc.items, cc.client = items, c
	}
	l.mu.Unlock()
	return items, nil
}

func (l *link) tools(ctx context.Context) ([]protocol.Tool, error) {
	if _, err := l.client(ctx); err != nil {
		return nil, err
	}
	list, err := l.srv.Tools(ctx)
	return list, upstreamError(l.up.name, err)
}

func (l *link) prompts(ctx context.Context) ([]protocol.Prompt, error) {
	return fetch(ctx, l, func(ls *lists) *cached[protocol.Prompt] { return &ls.prompts },
		func(c protocol.ServerCapabilities) bool { return c.Prompts != nil }, (*client.Client).Prompts)
}

func (l *link) resources(ctx context.Context) ([]protocol.Resource, error) {
	return fetch(ctx, l, func(ls *lists) *cached[protocol.Resource] { return &ls.resources },
		func(c protocol.ServerCapabilities) bool { return c.Resources != nil }, (*client.Client).Resources)
}

func (l *link) templates(ctx context.Context) ([]protocol.ResourceTemplate, error) {
	return fetch(ctx, l, func(ls *lists) *cached[protocol.ResourceTemplate] { return &ls.templates },
		func(c protocol.ServerCapabilities) bool { return c.Resources != nil }, (*client.Client).ResourceTemplates)
}
