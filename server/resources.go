package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/yosida95/uritemplate/v3"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// ResourceHandler reads a resource. For a resource template, the values of
// the template's variables are in req.URIVars. Return [ErrResourceNotFound]
// (possibly wrapped) when there is no such resource.
type ResourceHandler func(ctx context.Context, req *Request, uri string) (*protocol.ReadResourceResult, error)

// ErrResourceNotFound reports a read of an unknown resource. The client
// gets -32002 (legacy) or -32602 (2026-07-28: "Change resource not found
// error code from -32002 to -32602").
var ErrResourceNotFound = errors.New("resource not found")

type resourceEntry struct {
	resource protocol.Resource
	handler  ResourceHandler
}

type templateEntry struct {
	template protocol.ResourceTemplate
	compiled *uritemplate.Template
	handler  ResourceHandler
}

// AddResource adds (or replaces) a resource. It panics on a URI that is
// not absolute (it must start with a scheme: "notes://readme", not
// "readme") and on a nil handler.
func (s *Server) AddResource(r *protocol.Resource, h ResourceHandler) {
	if err := checkResourceURI(r.URI); err != nil {
		panic(err.Error())
	}
	mustHandler(h == nil, fmt.Sprintf("resource %q", r.URI))
	s.mu.Lock()
	s.resources.put(r.URI, &resourceEntry{resource: *r, handler: h})
	s.mu.Unlock()
	s.listChanged(protocol.NotificationResourcesListChanged)
}

// AddResourceTemplate adds (or replaces) a resource template: reads of
// URIs that match t.URITemplate (RFC 6570) and are not resources of their
// own go to h. It panics if the template is invalid, does not start with
// a scheme (or a variable), or h is nil.
func (s *Server) AddResourceTemplate(t *protocol.ResourceTemplate, h ResourceHandler) {
	compiled, err := uritemplate.New(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("server: resource template %q: %v", t.URITemplate, err))
	}
	if err := checkTemplateURI(t.URITemplate); err != nil {
		panic(err.Error())
	}
	mustHandler(h == nil, fmt.Sprintf("resource template %q", t.URITemplate))
	s.mu.Lock()
	s.templates.put(t.URITemplate, &templateEntry{template: *t, compiled: compiled, handler: h})
	s.mu.Unlock()
	s.listChanged(protocol.NotificationResourcesListChanged)
}

// RemoveResources removes resources by URI.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	removed := s.resources.remove(uris...)
	s.mu.Unlock()
	if removed {
		s.listChanged(protocol.NotificationResourcesListChanged)
	}
}

// RemoveResourceTemplates removes resource templates by their template.
func (s *Server) RemoveResourceTemplates(templates ...string) {
	s.mu.Lock()
	removed := s.templates.remove(templates...)
	s.mu.Unlock()
	if removed {
		s.listChanged(protocol.NotificationResourcesListChanged)
	}
}

func (s *Server) listResources(r *Request, params jsontext.Value) (any, error) {
	var p protocol.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	entries, next, err := s.resources.page(p.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &protocol.ListResourcesResult{Resources: make([]protocol.Resource, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Resources[i] = e.resource
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			res.Resources[i].Title = ""
		}
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) {
			res.Resources[i].Icons = nil
		}
	}
	return res, nil
}

func (s *Server) listTemplates(r *Request, params jsontext.Value) (any, error) {
	var p protocol.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	s.mu.RLock()
	entries, next, err := s.templates.page(p.Cursor, s.opts.PageSize)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	res := &protocol.ListResourceTemplatesResult{ResourceTemplates: make([]protocol.ResourceTemplate, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.ResourceTemplates[i] = e.template
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			res.ResourceTemplates[i].Title = ""
		}
		if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) {
			res.ResourceTemplates[i].Icons = nil
		}
	}
	return res, nil
}

// lookupResource finds the handler of uri: a resource of its own first,
// else the first template (in template order) that matches.
func (s *Server) lookupResource(uri string) (ResourceHandler, map[string]string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if e, ok := s.resources.get(uri); ok {
		return e.handler, nil
	}
	for _, t := range s.templates.all() {
		if vals := t.compiled.Match(uri); vals != nil {
			vars := make(map[string]string, len(vals))
			for name, v := range vals {
				vars[name] = v.String()
			}
			return t.handler, vars
		}
	}
	return nil, nil
}

func (s *Server) notFound(r *Request, uri string) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	code := int64(protocol.CodeResourceNotFound)
	if r.stateless {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "Resource not found: " + uri, Data: data}
}

func (s *Server) readResource(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	var p protocol.ReadResourceParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	h, vars := s.lookupResource(p.URI)
	if h == nil {
		return nil, s.notFound(r, p.URI)
	}
	r.URIVars = vars
	if r.stateless {
		if err := r.startMRTR(protocol.MethodResourcesRead, p.URI, nil, &p.MRTRParams); err != nil {
			return nil, err
		}
	}
	res, err := runMRTR(ctx, r, func() (any, error) { return h(ctx, r, p.URI) })
	if err != nil {
		if errors.Is(err, ErrResourceNotFound) {
			return nil, s.notFound(r, p.URI)
		}
		return nil, err
	}
	if rr, ok := res.(*protocol.ReadResourceResult); ok && rr == nil {
		return nil, s.notFound(r, p.URI)
	}
	return res, nil
}

// subscribe handles the legacy resources/subscribe and unsubscribe.
func (s *Server) subscribe(sess *Session, on bool, params jsontext.Value) (any, error) {
	var p protocol.SubscribeParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	if p.URI == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing uri")
	}
	if on {
		if c := s.capabilities().Resources; c == nil || !c.Subscribe {
			// "Servers that support subscriptions MUST declare the
			// subscribe capability"; this one does not.
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this server offers no resource subscriptions")
		}
		if len(p.URI) > MaxURIBytes {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "a resource URI of %d bytes: the limit is %d", len(p.URI), MaxURIBytes)
		}
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	_, had := sess.subs[p.URI]
	switch {
	case on && !had:
		if err := s.addSubscription(sess, p.URI); err != nil {
			return nil, err
		}
	case !on && had:
		delete(sess.subs, p.URI)
		s.releaseSubscriptions(subscriptionBytes(p.URI))
	}
	return &protocol.EmptyResult{}, nil
}

// addSubscription subscribes the session to uri, within the bounds of a
// session and of the server. Callers hold sess.mu.
func (s *Server) addSubscription(sess *Session, uri string) error {
	if len(sess.subs) >= s.opts.MaxSubscriptions {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"this session already subscribes to %d resources, the most this server allows; unsubscribe from some first", len(sess.subs))
	}
	if sess.ended {
		return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the session has ended")
	}
	if err := s.reserveSubscriptions(subscriptionBytes(uri)); err != nil {
		return err
	}
	if sess.subs == nil {
		sess.subs = make(map[string]struct{})
	}
	sess.subs[uri] = struct{}{}
	return nil
}

// MaxURIBytes bounds the URI of a resource a client subscribes to,
// which the server keeps for the subscription's life.
const MaxURIBytes = 8 << 10
