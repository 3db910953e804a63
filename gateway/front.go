package gateway

import (
	"encoding/base64"
	"strconv"
	"sync"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/ssehandler"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A front is one endpoint of the gateway: the aggregated one (/mcp, /sse),
// or one upstream's own (/servers/NAME/mcp, /servers/NAME/sse), each an
// MCP server whose requests go upstream, over both HTTP transports.
type front struct {
	g    *Gateway
	only *upstream // nil: every upstream, aggregated
	srv  *server.Server
	http *streamablehandler.Handler
	sse  *ssehandler.Handler

	views views
	subs  sessionSubs
	vw    *viewEndpoint // a view's endpoint (views.go); nil for the others
}

func newFront(g *Gateway, only *upstream) *front {
	return openFront(&front{g: g, only: only})
}

// openFront makes f's MCP server and its HTTP handlers: f is the
// aggregated endpoint, one upstream's, or a view's (views.go).
func openFront(f *front) *front {
	g, only := f.g, f.only
	mw := append([]intercept.Middleware{counting(&g.inflight), f.mark}, g.opts.Middleware...)
	mw = append(mw, f.serving())
	f.srv = server.New(g.impl, &server.Options{
		Instructions: g.opts.Instructions,
		Logger:       g.log,
		Receiving:    mw,
		Capabilities: &protocol.ServerCapabilities{
			Tools:       &protocol.ToolsCapability{ListChanged: true},
			Prompts:     &protocol.PromptsCapability{ListChanged: true},
			Resources:   &protocol.ResourcesCapability{ListChanged: true, Subscribe: true},
			Completions: &protocol.CompletionsCapability{},
			Logging:     &protocol.LoggingCapability{},
			Tasks:       tasksCapability(),
		},
	})
	if f.vw == nil {
		declareSkills(f) // a view offers no skills
	}
	f.srv.DeclareExtension(protocol.ExtensionTasks, nil)
	base := ""
	if only != nil {
		base = "/servers/" + only.name
	}
	if f.vw != nil {
		base = "/views/" + f.vw.name
	}
	ho := g.opts.HTTP
	f.http = streamablehandler.New(f.srv, &ho)
	f.sse = ssehandler.New(f.srv, &ssehandler.Options{
		SSEPath: base + "/sse", MessagePath: base + "/message",
		AllowedOrigins: ho.AllowedOrigins, AllowedHosts: ho.AllowedHosts,
		DisableHostCheck: ho.DisableHostCheck, MaxSessions: ho.MaxSessions, MaxBodyBytes: ho.MaxBodyBytes,
	})
	return f
}

// upstreams returns the upstreams the endpoint shows.
func (f *front) upstreams() []*upstream {
	if f.only != nil {
		return []*upstream{f.only}
	}
	return f.g.upstreamList()
}

// close ends the endpoint's sessions and streams.
func (f *front) close() {
	f.http.Close()
	f.sse.Close()
	f.srv.Close()
}

// page returns one page of a catalog: the cursor is the position of the
// page's first item.
func page[T any](f *front, req *server.Request, c *catalog[T], result func(items []T, next string) any) (any, error) {
	var p protocol.PaginatedParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	start := 0
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n < 0 || n > len(c.items) {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor %q", p.Cursor)
		}
		start = n
	}
	end := min(start+f.g.opts.PageSize, len(c.items))
	next := ""
	if end < len(c.items) {
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	items := c.items[start:end]
	if items == nil {
		items = []T{}
	}
	return result(items, next), nil
}

// sessionSubs are the upstream subscriptions of an endpoint's legacy
// sessions, by the URI the client subscribed to, given up when a session
// ends.
type sessionSubs struct {
	mu sync.Mutex
	m  map[*server.Session]map[string]upstreamSub
}

// upstreamSub is one subscription upstream: the link and the server's URI
// (another than the client's for a skill:// URI of the aggregated
// endpoint).
type upstreamSub struct {
	l   *link
	uri string
}

func (s *sessionSubs) has(sess *server.Session, uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[sess][uri]
	return ok
}

func (s *sessionSubs) add(g *Gateway, sess *server.Session, uri string, sub upstreamSub) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[*server.Session]map[string]upstreamSub{}
	}
	m := s.m[sess]
	if m == nil {
		m = map[string]upstreamSub{}
		s.m[sess] = m
		g.wg.Go(func() {
			select {
			case <-sess.Done():
			case <-g.closing:
			}
			s.mu.Lock()
			m := s.m[sess]
			delete(s.m, sess)
			s.mu.Unlock()
			for _, sub := range m {
				sub.l.unsubscribe(sub.uri)
			}
		})
	}
	if old, ok := m[uri]; ok {
		old.l.unsubscribe(old.uri)
	}
	m[uri] = sub
}

func (s *sessionSubs) drop(sess *server.Session, uri string) {
	s.mu.Lock()
	sub, ok := s.m[sess][uri]
	delete(s.m[sess], uri)
	s.mu.Unlock()
	if ok {
		sub.l.unsubscribe(sub.uri)
	}
}
