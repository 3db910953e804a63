package server

import (
	"context"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpjson"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// handleMessage serves one incoming request or notification and returns
// the result to send back (serverapi.Server.HandleMessage): sess is the
// legacy session the message belongs to (nil for a sessionless HTTP
// request) and peer the way back to the client.
//
// The era is chosen per request, as a dual-era server must: "A request
// carrying modern per-request _meta is served statelessly according to
// this revision. An initialize request selects legacy semantics, scoped to
// the stdio process (stdio) or the session (HTTP)."
func (s *Server) handleMessage(ctx context.Context, m *jsonrpc.Message, sess *Session, peer serverapi.Peer) (any, error) {
	res, err := s.serveMessage(ctx, m, sess, peer)
	if r, ok := res.(*protocol.CallToolResult); ok {
		// A tool result goes out through its fast encoder.
		res = (*mcpjson.ToolResult)(r)
	}
	return res, err
}

// serveMessage is handleMessage before the result is made a body.
func (s *Server) serveMessage(ctx context.Context, m *jsonrpc.Message, sess *Session, peer serverapi.Peer) (any, error) {
	if m.IsNotification() {
		r := s.sessionRequest(m, sess, peer)
		s.handle(r.withOrigin(ctx), r)
		return nil, nil
	}
	if sess == nil {
		// Without a session (a stateless HTTP request) only the stateless
		// era is possible: the request must carry its _meta.
		if err := s.checkRequestMeta(m); err != nil {
			return nil, err
		}
		if err := s.checkVersion(jsonrpc2.Meta(m).ProtocolVersion); err != nil {
			return nil, err
		}
		return s.statelessRequest(ctx, m, peer)
	}
	if v := jsonrpc2.Meta(m).ProtocolVersion; v != "" && (protocol.IsStateless(v) || !sess.Initialized()) {
		if err := s.checkVersion(v); err != nil {
			return nil, err
		}
		return s.statelessRequest(ctx, m, peer)
	}
	if m.Method != protocol.MethodInitialize && m.Method != protocol.MethodPing && !sess.Initialized() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"request without %s in _meta: stateless clients must send the protocol version with every request; legacy clients must send initialize first", protocol.MetaProtocolVersion)
	}
	r := s.sessionRequest(m, sess, peer)
	return s.handle(r.withOrigin(ctx), r)
}

// metaCache remembers the last few _meta objects decoded: a client sends
// the same one with every request, so most requests skip its decoding.
// Decoded values are shared and must not be modified.
type metaCache struct {
	mu      sync.Mutex
	entries [4]metaEntry
	next    int
}

type metaEntry struct {
	raw  string
	meta *protocol.RequestMeta
}

// requestMeta decodes a stateless request's _meta, from the cache when the
// same bytes were seen recently.
func (s *Server) requestMeta(raw []byte) (*protocol.RequestMeta, error) {
	c := &s.metas
	c.mu.Lock()
	for _, e := range c.entries {
		if e.meta != nil && e.raw == string(raw) {
			c.mu.Unlock()
			return e.meta, nil
		}
	}
	c.mu.Unlock()
	meta := new(protocol.RequestMeta)
	if err := json.Unmarshal(raw, meta); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid _meta: %v", err)
	}
	if len(meta.ProgressToken) == 0 {
		c.mu.Lock()
		c.entries[c.next] = metaEntry{raw: string(raw), meta: meta}
		c.next = (c.next + 1) % len(c.entries)
		c.mu.Unlock()
	}
	return meta, nil
}

// checkRequestMeta checks that a stateless request carries the _meta fields
// every request must: "A request missing any required field is
// malformed; the server MUST reject it with JSON-RPC error code -32602."
func (s *Server) checkRequestMeta(m *jsonrpc.Message) error {
	meta := jsonrpc2.Meta(m)
	if len(meta.Raw) == 0 {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing _meta: every request must carry %s and %s", protocol.MetaProtocolVersion, protocol.MetaClientCapabilities)
	}
	if meta.ProtocolVersion == "" {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing required _meta field %s", protocol.MetaProtocolVersion)
	}
	if v, ok, _ := jsonrpc2.Member(meta.Raw, protocol.MetaClientCapabilities); !ok || len(v) == 0 || v[0] != '{' {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing required _meta field %s", protocol.MetaClientCapabilities)
	}
	return nil
}

// checkVersion returns the UnsupportedProtocolVersionError for a stateless
// request in revision v, or nil when the server serves v statelessly.
func (s *Server) checkVersion(v string) error {
	if !protocol.IsStateless(v) || !s.supports(v) {
		return s.unsupportedVersion(v)
	}
	return nil
}

func (s *Server) unsupportedVersion(requested string) error {
	data, _ := json.Marshal(&protocol.UnsupportedProtocolVersionData{Supported: s.opts.Versions, Requested: requested})
	return &jsonrpc.Error{Code: protocol.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version", Data: data}
}

func (s *Server) handleInitialize(m *jsonrpc.Message, sess *Session) (any, error) {
	if n := len(m.Params); n > s.opts.MaxInitializeBytes {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"the params of initialize take %d bytes, more than this server keeps for a session (%d)", n, s.opts.MaxInitializeBytes)
	}
	var p protocol.InitializeParams
	if err := decodeParams(m.Params, &p); err != nil {
		return nil, err
	}
	if len(s.statelessVersions()) == len(s.opts.Versions) {
		// "A server that supports only modern versions SHOULD name the
		// protocol versions it supports in any error it returns to an
		// initialize request."
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest,
			"this server supports only the stateless protocol versions %s; initialize is not used by them", strings.Join(s.opts.Versions, ", "))
	}
	if sess == nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "initialize is not possible on this transport")
	}
	if sess.Initialized() {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "the session is already initialized")
	}
	return s.initialize(sess, &p), nil
}

// notification serves a notification of a client, through r, whose ID is
// not valid.
func (s *Server) notification(ctx context.Context, r *Request) {
	m, sess := r.msg, r.Session
	switch m.Method {
	case protocol.NotificationInitialized:
		if sess != nil {
			sess.mu.Lock()
			sess.ready = true
			sess.mu.Unlock()
			if h := s.opts.InitializedHandler; h != nil {
				h(ctx, sess)
			}
		}
	case protocol.NotificationRootsListChanged:
		if h := s.opts.RootsListChangedHandler; sess != nil && h != nil {
			h(ctx, sess)
		}
	default:
		if h := s.customMethod(m.Method); h != nil {
			h(ctx, r)
		}
	}
}

// statelessRequest serves a stateless request: "Servers MUST NOT rely on
// prior requests over the same connection to establish context ... Every
// request supplies this metadata in its _meta field."
func (s *Server) statelessRequest(ctx context.Context, m *jsonrpc.Message, peer serverapi.Peer) (any, error) {
	sniffed := jsonrpc2.Meta(m)
	meta, err := s.requestMeta(sniffed.Raw)
	if err != nil {
		return nil, err
	}
	if meta.ClientCapabilities == nil {
		// "A request missing any required field is malformed; the server
		// MUST reject it with JSON-RPC error code -32602 (Invalid params)."
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing required _meta field %s", protocol.MetaClientCapabilities)
	}
	// A stateless request's multi-round-trip state shares its allocation;
	// legacy requests, which have none, stay smaller.
	both := &struct {
		r Request
		m mrtr
	}{r: Request{
		ID: m.ID, Method: m.Method, ProtocolVersion: meta.ProtocolVersion,
		ClientCapabilities: *meta.ClientCapabilities, RawMeta: sniffed.Raw,
		server: s, peer: peer, msg: m, progressToken: sniffed.ProgressToken, logLevel: meta.LogLevel, stateless: true,
	}}
	r := &both.r
	r.mrtrState = &both.m
	ctx = r.withOrigin(ctx)
	if meta.ClientInfo != nil {
		r.ClientInfo = *meta.ClientInfo
	}
	if m.Method == protocol.MethodSubscriptionsListen {
		return s.handle(ctx, r)
	}
	res, err := s.handle(ctx, r)
	if err != nil {
		return nil, err
	}
	return s.stamp(res), nil
}

// statelessMethod serves a stateless request once its Request is built.
func (s *Server) statelessMethod(ctx context.Context, r *Request) (any, error) {
	switch r.Method {
	case protocol.MethodDiscover:
		return s.discover(), nil
	case protocol.MethodSubscriptionsListen:
		return s.listen(ctx, r, r.msg.Params)
	}
	return s.serve(ctx, r, r.msg.Params)
}

// sessionRequest is the Request of a message of a legacy session that is
// not stateless: a request of the session, its initialize or ping, or a
// notification (of a sessionless HTTP request too: sess is then nil).
func (s *Server) sessionRequest(m *jsonrpc.Message, sess *Session, peer serverapi.Peer) *Request {
	meta := jsonrpc2.Meta(m)
	r := &Request{ID: m.ID, Method: m.Method, Session: sess, RawMeta: meta.Raw,
		server: s, peer: peer, msg: m, progressToken: meta.ProgressToken, stateless: sess == nil}
	if sess != nil {
		if hs := sess.hs.Load(); hs != nil {
			r.ProtocolVersion, r.ClientInfo, r.ClientCapabilities = hs.version, hs.clientInfo, hs.clientCaps
		}
	}
	return r
}

// legacyMethod serves a request of an initialized legacy session once its
// Request is built.
func (s *Server) legacyMethod(ctx context.Context, r *Request) (any, error) {
	sess, m := r.Session, r.msg
	switch m.Method {
	case protocol.MethodInitialize:
		return s.handleInitialize(m, sess)
	case protocol.MethodPing:
		return &protocol.EmptyResult{}, nil
	case protocol.MethodSetLevel:
		var p protocol.SetLevelParams
		if err := decodeParams(m.Params, &p); err != nil {
			return nil, err
		}
		if p.Level.Rank() < 0 {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown log level %q", p.Level)
		}
		sess.mu.Lock()
		sess.logLevel = p.Level
		sess.mu.Unlock()
		return &protocol.EmptyResult{}, nil
	case protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		return s.subscribe(sess, m.Method == protocol.MethodResourcesSubscribe, m.Params)
	}
	return s.serve(ctx, r, m.Params)
}

// serve runs the methods both eras share.
func (s *Server) serve(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	switch r.Method {
	case protocol.MethodToolsList:
		return s.listTools(r, params)
	case protocol.MethodToolsCall:
		return s.callTool(ctx, r, params)
	case protocol.MethodResourcesList:
		return s.listResources(r, params)
	case protocol.MethodResourcesTemplatesList:
		return s.listTemplates(r, params)
	case protocol.MethodResourcesRead:
		return s.readResource(ctx, r, params)
	case protocol.MethodPromptsList:
		return s.listPrompts(r, params)
	case protocol.MethodPromptsGet:
		return s.getPrompt(ctx, r, params)
	case protocol.MethodComplete:
		return s.complete(ctx, r, params)
	case protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel, protocol.MethodTasksResult, protocol.MethodTasksList:
		return s.tasksMethod(ctx, r, params)
	}
	if h := s.customMethod(r.Method); h != nil {
		return h(ctx, r)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s", r.Method)
}

func (s *Server) discover() *protocol.DiscoverResult {
	res := &protocol.DiscoverResult{
		SupportedVersions: s.opts.Versions,
		Capabilities:      s.capabilitiesFor(protocol.LatestVersion),
		Instructions:      s.opts.Instructions,
	}
	res.CacheFields = s.listCache()
	return res
}

func (s *Server) listCache() protocol.CacheFields {
	ttl := s.opts.ListTTL.Milliseconds()
	return protocol.CacheFields{TTLMs: &ttl, CacheScope: protocol.CachePublic}
}

// stamp adds what every stateless result carries: resultType, the server's
// identity ("Servers SHOULD include ... io.modelcontextprotocol/serverInfo
// in every result's _meta") and, for cacheable results, caching hints.
func (s *Server) stamp(res any) any {
	var rf *protocol.ResultFields
	var cf *protocol.CacheFields
	switch v := res.(type) {
	case *protocol.InputRequiredResult:
		rf = &v.ResultFields
	case *protocol.CallToolResult:
		if v.ResultType != "" && v.Meta[protocol.MetaServerInfo] != nil {
			return res // stamped already (typed handlers' results are)
		}
		c := *v // handlers may return a shared value; never modify it
		res, rf = &c, &c.ResultFields
	case *protocol.GetPromptResult:
		c := *v
		res, rf = &c, &c.ResultFields
	case *protocol.ReadResourceResult:
		c := *v
		res, rf, cf = &c, &c.ResultFields, &c.CacheFields
		if cf.CacheScope == "" {
			cf.CacheScope = protocol.CachePrivate
		}
	case *protocol.ListToolsResult:
		rf, cf = &v.ResultFields, &v.CacheFields
	case *protocol.ListResourcesResult:
		rf, cf = &v.ResultFields, &v.CacheFields
	case *protocol.ListResourceTemplatesResult:
		rf, cf = &v.ResultFields, &v.CacheFields
	case *protocol.ListPromptsResult:
		rf, cf = &v.ResultFields, &v.CacheFields
	case *protocol.DiscoverResult:
		rf, cf = &v.ResultFields, &v.CacheFields
	case *protocol.CompleteResult:
		rf = &v.ResultFields
	case *protocol.EmptyResult:
		rf = &v.ResultFields
	default:
		return res
	}
	if rf.ResultType == "" {
		rf.ResultType = protocol.ResultComplete
	}
	if len(rf.Meta) == 0 {
		rf.Meta = s.metaInfo
	} else if _, ok := rf.Meta[protocol.MetaServerInfo]; !ok {
		m := make(protocol.Meta, len(rf.Meta)+1)
		for k, v := range rf.Meta {
			m[k] = v
		}
		m[protocol.MetaServerInfo] = s.impl
		rf.Meta = m
	}
	if cf != nil && rf.ResultType == protocol.ResultComplete {
		// "Servers MUST include caching hints on results with
		// resultType: complete" of the cacheable operations.
		if cf.TTLMs == nil {
			var zero int64
			cf.TTLMs = &zero
		}
		if cf.CacheScope == "" {
			cf.CacheScope = protocol.CachePublic
		}
	}
	return res
}

// decodeParams decodes request params, reporting problems as invalid
// params. Absent params decode as an empty object.
func decodeParams(params jsontext.Value, out any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, out); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}
