package gateway

import (
	"context"
	"iter"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// saw notes the caller ctx names as the session's latest.
func (s *seen) saw(ctx context.Context) {
	if c, ok := intercept.CallerFrom(ctx); ok {
		s.who.Store(c)
	}
}

// sessionCaller returns the caller of session id as its latest request
// named it, nil when none did.
func (o *owners) sessionCaller(id string) *intercept.Caller {
	if s, ok := o.owner(id); ok {
		return s.who.Load()
	}
	return nil
}

// A Notice is what a server sends a gateway's clients on its own, which
// Options.Hears decides who hears.
type Notice struct {
	// Method is protocol.NotificationMessage (a log message) or
	// protocol.NotificationResourceUpdated.
	Method string
	// Server is the server that sent it.
	Server string
	// URI is the updated resource's, as the endpoint shows it.
	URI string
}

// hearing returns whether a client of f may hear n, as Options.Hears
// decides, once per caller: a legacy session's (listen nil), or the
// caller the context of a stateless listen request names (sess nil).
func (f *front) hearing(n Notice) func(sess *server.Session, listen context.Context) bool {
	hears := f.g.opts.Hears
	if hears == nil {
		return func(*server.Session, context.Context) bool { return true }
	}
	e := f.endpoint()
	decided := map[*intercept.Caller]bool{}
	return func(sess *server.Session, listen context.Context) bool {
		var c *intercept.Caller
		if sess != nil {
			c = f.g.owners.sessionCaller(sess.ID)
		} else {
			c, _ = intercept.CallerFrom(listen)
		}
		ok, known := decided[c]
		if !known {
			ok = hears(c, e, n)
			decided[c] = ok
		}
		return ok
	}
}

// resourceUpdated tells the clients of f subscribed to uri, a resource
// of u, that may hear it, by the URI f shows.
func (f *front) resourceUpdated(u *upstream, uri string) {
	shown := f.outward(u, uri)
	if f.g.opts.Hears == nil {
		f.srv.ResourceUpdated(context.Background(), shown)
		return
	}
	f.srv.ResourceUpdatedFor(context.Background(), shown, f.hearing(Notice{Method: protocol.NotificationResourceUpdated, Server: u.name, URI: shown}))
}

// An Offer is one tool, prompt, resource or resource template of a server
// that an endpoint shows: Kind is protocol.MethodToolsCall,
// MethodPromptsGet, MethodResourcesRead or MethodResourcesTemplatesList;
// Name is the endpoint's name for it (a resource's or template's URI as
// the endpoint shows it); UpstreamName is the server's own (for tools and
// prompts).
type Offer struct {
	Kind, Name, UpstreamName string
}

// Offers yields what the endpoint shows of server, from the lists it
// last built (nothing of a list no client of it has read yet).
func (e *Endpoint) Offers(server string) iter.Seq[Offer] {
	return func(yield func(Offer) bool) {
		v := &e.f.views
		v.mu.Lock()
		tools, prompts, resources, templates := v.tools, v.prompts, v.resources, v.templates
		v.mu.Unlock()
		_ = offerRoutes(tools, protocol.MethodToolsCall, server, yield) &&
			offerRoutes(prompts, protocol.MethodPromptsGet, server, yield) &&
			offerOwned(resources, protocol.MethodResourcesRead, server, yield) &&
			offerOwned(templates, protocol.MethodResourcesTemplatesList, server, yield)
	}
}

func offerRoutes[T any](c *catalog[T], kind, server string, yield func(Offer) bool) bool {
	if c == nil {
		return true
	}
	for name, r := range c.routes {
		if r.up.name == server && !yield(Offer{Kind: kind, Name: name, UpstreamName: r.name}) {
			return false
		}
	}
	return true
}

func offerOwned[T any](c *catalog[T], kind, server string, yield func(Offer) bool) bool {
	if c == nil {
		return true
	}
	for uri, u := range c.owners {
		if u.name == server && !yield(Offer{Kind: kind, Name: uri}) {
			return false
		}
	}
	return true
}
