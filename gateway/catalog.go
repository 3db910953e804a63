package gateway

import (
	"context"
	"errors"
	"sync"

	"github.com/yosida95/uritemplate/v3"

	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// route is where a named tool or prompt of an endpoint goes: an upstream
// and the upstream's name for it.
type route struct {
	up   *upstream
	name string
}

// catalog is one list as an endpoint shows it, and where each item goes.
type catalog[T any] struct {
	gen    uint64
	items  []T
	routes map[string]route // tools and prompts, by the endpoint's name
	// owners holds resources by URI and templates by URI template.
	owners    map[string]*upstream
	templates []templateRoute
	problems  []error // of the upstreams left out
}

type templateRoute struct {
	up       *upstream
	compiled *uritemplate.Template
}

// views caches the catalogs of an endpoint for clients without a process
// of their own.
type views struct {
	mu        sync.Mutex
	tools     *catalog[protocol.Tool]
	prompts   *catalog[protocol.Prompt]
	resources *catalog[protocol.Resource]
	templates *catalog[protocol.ResourceTemplate]
}

// cacheable reports whether the catalogs of req can be shared: not when
// one of the endpoint's upstreams gives req's session a process of its own.
func (f *front) cacheable(req *server.Request) bool {
	if req.Session == nil {
		return true
	}
	if f.only != nil {
		return !f.only.isolated
	}
	return !f.g.anyIsolated() // without a list of upstreams per call
}

// viewOf returns a catalog from slot when it is current, or builds it.
func viewOf[T any](f *front, ctx context.Context, req *server.Request, slot **catalog[T],
	build func(ctx context.Context, req *server.Request, ups []*upstream) *catalog[T]) *catalog[T] {
	gen := f.g.gen.Load()
	share := f.cacheable(req)
	if share {
		f.views.mu.Lock()
		c := *slot
		f.views.mu.Unlock()
		if c != nil && c.gen == gen {
			return c
		}
	}
	c := build(ctx, req, f.upstreams())
	c.gen = gen
	if share && len(c.problems) == 0 {
		// A catalog that left a server out is built again next time, so
		// that the server is back as soon as it is.
		f.views.mu.Lock()
		*slot = c
		f.views.mu.Unlock()
	}
	return c
}

// gather lists one kind of item of every upstream, concurrently.
func gather[T any](ctx context.Context, req *server.Request, ups []*upstream, list func(*link, context.Context) ([]T, error)) ([][]T, []error) {
	lists := make([][]T, len(ups))
	errs := make([]error, len(ups))
	var wg sync.WaitGroup
	for i, u := range ups {
		wg.Go(func() {
			l, err := u.listLink(ctx, req)
			if err == nil {
				done := l.use()
				lists[i], err = list(l, ctx)
				done()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	return lists, errs
}

// named builds the catalog of tools or prompts: named as the host names
// them on the aggregated endpoint, as they are on a server's own.
func named[T any](f *front, ups []*upstream, lists [][]T, errs []error, nameOf func(*T) string, rename func(T, string) T) *catalog[T] {
	c := &catalog[T]{routes: map[string]route{}}
	var names []string
	var tools [][]protocol.Tool
	var kept [][]T
	var owners []*upstream
	for i, u := range ups {
		if errs[i] != nil {
			c.problems = append(c.problems, errs[i])
			continue
		}
		names = append(names, u.name)
		kept = append(kept, lists[i])
		owners = append(owners, u)
		ts := make([]protocol.Tool, len(lists[i]))
		for j := range lists[i] {
			ts[j].Name = nameOf(&lists[i][j])
		}
		tools = append(tools, ts)
	}
	if f.only != nil {
		for i := range kept {
			for _, item := range kept[i] {
				n := nameOf(&item)
				if _, dup := c.routes[n]; dup {
					continue
				}
				c.routes[n] = route{owners[i], n}
				c.items = append(c.items, item)
			}
		}
		return c
	}
	// host.Aggregate names tools; prompts follow the same rules.
	byServer := map[string]int{}
	for i, n := range names {
		byServer[n] = i
	}
	index := map[string]map[string]int{} // server -> item name -> position
	for i := range kept {
		m := map[string]int{}
		for j := range kept[i] {
			m[nameOf(&kept[i][j])] = j
		}
		index[names[i]] = m
	}
	for _, t := range host.Aggregate(names, tools, f.g.opts.Separator, f.g.opts.Prefix) {
		i := byServer[t.Server]
		item := kept[i][index[t.Server][t.Tool.Name]]
		c.routes[t.Name] = route{owners[i], t.Tool.Name}
		c.items = append(c.items, rename(item, t.Name))
	}
	return c
}

func (f *front) toolCatalog(ctx context.Context, req *server.Request) *catalog[protocol.Tool] {
	if f.vw != nil {
		return f.viewTools(ctx, req) // views.go
	}
	return viewOf(f, ctx, req, &f.views.tools, func(ctx context.Context, req *server.Request, ups []*upstream) *catalog[protocol.Tool] {
		lists, errs := gather(ctx, req, ups, (*link).tools)
		return named(f, ups, lists, errs, func(t *protocol.Tool) string { return t.Name },
			func(t protocol.Tool, n string) protocol.Tool { t.Name = n; return t })
	})
}

func (f *front) promptCatalog(ctx context.Context, req *server.Request) *catalog[protocol.Prompt] {
	if f.vw != nil {
		return f.viewPrompts(ctx, req) // views.go
	}
	return viewOf(f, ctx, req, &f.views.prompts, func(ctx context.Context, req *server.Request, ups []*upstream) *catalog[protocol.Prompt] {
		lists, errs := gather(ctx, req, ups, (*link).prompts)
		return named(f, ups, lists, errs, func(p *protocol.Prompt) string { return p.Name },
			func(p protocol.Prompt, n string) protocol.Prompt { p.Name = n; return p })
	})
}

// resourceCatalog lists resources under their own URIs: a URI names one
// resource whichever server has it, and the first server listing it owns it.
func (f *front) resourceCatalog(ctx context.Context, req *server.Request) *catalog[protocol.Resource] {
	if f.vw != nil {
		return f.viewResources(ctx, req) // views.go
	}
	return viewOf(f, ctx, req, &f.views.resources, func(ctx context.Context, req *server.Request, ups []*upstream) *catalog[protocol.Resource] {
		lists, errs := gather(ctx, req, ups, (*link).resources)
		c := &catalog[protocol.Resource]{owners: map[string]*upstream{}}
		for i, u := range ups {
			if errs[i] != nil {
				c.problems = append(c.problems, errs[i])
				continue
			}
			for _, r := range lists[i] {
				r.URI = f.outward(u, r.URI) // a skill's files apart per server
				if _, dup := c.owners[r.URI]; !dup {
					c.owners[r.URI] = u
					c.items = append(c.items, r)
				}
			}
		}
		return c
	})
}

func (f *front) templateCatalog(ctx context.Context, req *server.Request) *catalog[protocol.ResourceTemplate] {
	if f.vw != nil {
		return f.viewTemplates(ctx, req) // views.go
	}
	return viewOf(f, ctx, req, &f.views.templates, func(ctx context.Context, req *server.Request, ups []*upstream) *catalog[protocol.ResourceTemplate] {
		lists, errs := gather(ctx, req, ups, (*link).templates)
		c := &catalog[protocol.ResourceTemplate]{owners: map[string]*upstream{}}
		for i, u := range ups {
			if errs[i] != nil {
				c.problems = append(c.problems, errs[i])
				continue
			}
			for _, t := range lists[i] {
				t.URITemplate = f.outward(u, t.URITemplate)
				if _, dup := c.owners[t.URITemplate]; dup {
					continue
				}
				c.owners[t.URITemplate] = u
				c.items = append(c.items, t)
				if compiled, err := uritemplate.New(t.URITemplate); err == nil {
					c.templates = append(c.templates, templateRoute{u, compiled})
				}
			}
		}
		return c
	})
}

// resolve finds where a named tool or prompt goes.
func resolve[T any](f *front, ctx context.Context, req *server.Request, kind, name string,
	catalogOf func(*front, context.Context, *server.Request) *catalog[T]) (route, error) {
	c := catalogOf(f, ctx, req)
	if r, ok := c.routes[name]; ok {
		return r, nil
	}
	if len(c.problems) > 0 {
		return route{}, errors.Join(c.problems...)
	}
	return route{}, errUnknown(kind, name)
}
