// Package server implements MCP servers: tools, resources, resource
// templates, prompts, completion, logging, progress and subscriptions,
// served to clients of both protocol eras from one [Server] value.
//
// A legacy client (2024-11-05 to 2025-11-25) opens a session with
// initialize; a stateless client (2026-07-28) sends self-contained requests
// whose _meta carries the protocol version and the client's capabilities.
// The same tool handler serves both: when it asks the client something
// ([Request.Elicit], [Request.CreateMessage], [Request.ListRoots]), a legacy
// session gets a server-to-client request and a stateless client gets an
// input_required result with an integrity-protected requestState, and the
// handler is run again when the client retries with the answer.
// [Request.Ask] and [Request.AskAll] do the same under keys the handler
// chooses, several questions at once.
package server

import (
	"context"
	"crypto/rand"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/jsonschema"
	"github.com/ferrymcp/ferry/protocol"
)

// Options configure a [Server]. The zero value is usable.
type Options struct {
	// Instructions tell the client's model how to use the server.
	Instructions string
	// Versions are the protocol revisions served, newest first. Empty
	// means every revision ferry speaks ([protocol.SupportedVersions]).
	Versions []string
	// Logger receives the server's own diagnostics (not the MCP log
	// messages sent to clients). Nil discards them.
	Logger *slog.Logger
	// PageSize is the most items a list result holds before it is
	// paginated. Zero means 1000.
	PageSize int
	// ListTTL is the ttlMs hint sent with stateless list results and
	// server/discover (2026-07-28 caching). Zero sends ttlMs 0.
	ListTTL time.Duration
	// RequestStateKey is the HMAC-SHA256 key that protects the
	// requestState of multi round-trip requests. Servers behind a load
	// balancer must share one key; nil means a random key per Server.
	RequestStateKey []byte
	// RequestStateTTL bounds how long a requestState stays valid. Zero
	// means 10 minutes.
	RequestStateTTL time.Duration
	// MaxInFlight bounds the requests one connection handles at once
	// (default 64).
	MaxInFlight int
	// MaxInitializeBytes bounds the params of initialize (default
	// 16 KiB; a client's name, version and capabilities take a few
	// hundred bytes): a legacy session keeps the client's info and
	// capabilities for its whole life, so a server with many sessions
	// must not keep megabytes for each. A larger initialize is refused
	// with an invalid-params error.
	MaxInitializeBytes int
	// MaxSubscriptions bounds the resources one legacy session may
	// subscribe to (resources/subscribe), and the resources one
	// stateless subscriptions/listen request may name (default 1,024).
	// Beyond it the request is refused with an invalid-params error. A
	// resource's URI may take at most [MaxURIBytes].
	MaxSubscriptions int
	// MaxSubscriptionBytes bounds what the subscriptions of all sessions
	// and listen streams together keep (default 64 MiB; each resource URI
	// or task id counts its length and 64 bytes): past it, a
	// resources/subscribe or subscriptions/listen is refused with an
	// internal error saying so, until other clients unsubscribe or end.
	// MaxSubscriptions alone bounds one session, not the thousands a
	// server may have.
	MaxSubscriptionBytes int
	// CompletionHandler answers completion/complete for references that
	// have no completer of their own.
	CompletionHandler func(ctx context.Context, req *Request, p *protocol.CompleteParams) (*protocol.CompleteResult, error)
	// InitializedHandler is called when a legacy session completes its
	// handshake.
	InitializedHandler func(ctx context.Context, s *Session)
	// RootsListChangedHandler is called when a legacy client says its
	// roots changed.
	RootsListChangedHandler func(ctx context.Context, s *Session)
	// LendToolArguments promises that tool handlers only borrow their
	// arguments, as io.Writer implementations borrow the slice given to
	// Write: once a handler has returned, neither it nor anything it
	// started (goroutines, context.AfterFunc callbacks) refers to the
	// request's memory: the raw arguments, the strings and slices decoded
	// from them (strings.Clone what must outlive the call), req.RawMeta.
	// The result it returns may refer to them: it is encoded before the
	// memory is reused.
	//
	// Transports that read each request into a buffer of their own
	// (Streamable HTTP) then reuse the buffers of tool calls, so that
	// large arguments make no garbage for the collector: with 64 KiB
	// arguments and 16 calls in flight, this nearly doubled the calls per
	// second of an echo tool on a 2-vCPU machine (see Speed in the README). A
	// handler that breaks the promise sees a string it kept change under
	// it.
	LendToolArguments bool
	// Receiving wraps the serving of every request and notification of
	// a client, the first element outermost: it sees each once its era
	// and session are settled (a legacy session's initialize and ping
	// included), may answer it itself, or call next and look at or
	// replace the result. [RequestOf] gives it the [Request] a handler
	// sees. The context carries the values of the HTTP request that
	// carried the message, in both eras (see [Request.Header]): an
	// authorization middleware finds there what the HTTP layer
	// validated.
	//
	// Sending wraps every request the server puts to a client
	// (elicitation/create, sampling/createMessage, roots/list: see
	// [Request.AskAll]), the first element outermost. In a legacy session
	// next sends it and returns the client's answer; to a stateless
	// client, next returns the answer its retried request carries, or
	// [ErrInputRequired] when it has none yet (the question then goes out
	// in the input_required result).
	//
	// A server without middleware pays nothing for it.
	Receiving, Sending []intercept.Middleware
	// Capabilities, when set, are advertised in addition to those the
	// server derives from what is registered (e.g. to announce tools
	// before any is added, or experimental capabilities).
	Capabilities *protocol.ServerCapabilities
	// SchemaEngine, when set, validates the tool input schemas the
	// built-in validator does not handle (composition and conditional
	// keywords, dialects other than 2020-12 and draft-07) and checks every
	// raw schema against its dialect's metaschema. Nil refuses such
	// schemas at AddTool. jsonschema/full provides one:
	//
	//	server.New(impl, &server.Options{SchemaEngine: full.Engine{}})
	SchemaEngine jsonschema.Engine
	// Tasks configure tool calls that run as tasks (see [TaskOptions]).
	Tasks TaskOptions
}

// Server is an MCP server. Register tools, resources and prompts, then
// serve it over any transport: [Server.Run] for a stream (stdio, in-memory),
// or the HTTP handler of the streamable package. One Server serves any
// number of connections and sessions at once, in both protocol eras.
type Server struct {
	impl     protocol.Implementation
	opts     Options
	log      *slog.Logger
	stateKey []byte
	metaInfo protocol.Meta // {"io.modelcontextprotocol/serverInfo": impl}, shared read-only

	mu         sync.RWMutex
	tools      registry[*toolEntry]
	resources  registry[*resourceEntry]
	templates  registry[*templateEntry]
	prompts    registry[*promptEntry]
	sessions   map[*Session]struct{}
	listeners  map[*listener]struct{}
	completers map[completerKey]Completer
	metas      metaCache
	receiving  intercept.Handler        // Options.Receiving around method; nil without any
	sending    intercept.Handler        // Options.Sending around a question's way out; nil without any
	methods    map[string]MethodHandler // custom methods (HandleMethod)
	closed     chan struct{}
	closeOnce  sync.Once
	tasks      taskManager    // tool calls running as tasks
	subBytes   atomic.Int64   // what all subscriptions keep (see reserveSubscriptions)
	extensions map[string]any // declared with DeclareExtension

	transportHook // what ferry's transports use of it (seam.go)
}

// New returns a server that identifies itself as impl.
func New(impl protocol.Implementation, opts *Options) *Server {
	s := &Server{impl: impl, sessions: map[*Session]struct{}{}, listeners: map[*listener]struct{}{}, closed: make(chan struct{})}
	s.transportHook = serverapi.NewHook((*transportOps)(s))
	if opts != nil {
		s.opts = *opts
	}
	if len(s.opts.Versions) == 0 {
		s.opts.Versions = protocol.SupportedVersions()
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 1000
	}
	if s.opts.MaxInitializeBytes <= 0 {
		s.opts.MaxInitializeBytes = 16 << 10
	}
	if s.opts.MaxSubscriptions <= 0 {
		s.opts.MaxSubscriptions = 1024
	}
	if s.opts.MaxSubscriptionBytes <= 0 {
		s.opts.MaxSubscriptionBytes = 64 << 20
	}
	if s.opts.RequestStateTTL <= 0 {
		s.opts.RequestStateTTL = 10 * time.Minute
	}
	s.stateKey = s.opts.RequestStateKey
	if len(s.stateKey) == 0 {
		s.stateKey = make([]byte, 32)
		rand.Read(s.stateKey)
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.metaInfo = protocol.Meta{protocol.MetaServerInfo: impl}
	s.buildChains()
	return s
}

// Implementation returns the server's name and version.
func (s *Server) Implementation() protocol.Implementation { return s.impl }

// Close ends every open subscriptions/listen stream gracefully. Sessions
// and connections are closed by their transports.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closed)
		s.taskMgr().closeAll()
	})
	return nil
}

// capabilities derives what the server advertises from what is
// registered.
func (s *Server) capabilities() protocol.ServerCapabilities {
	var c protocol.ServerCapabilities
	if o := s.opts.Capabilities; o != nil {
		c = *o
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.extensions) > 0 {
		c.Extensions = mergeExtensions(c.Extensions, s.extensions)
	}
	if s.tools.len() > 0 && c.Tools == nil {
		c.Tools = &protocol.ToolsCapability{ListChanged: true}
	}
	if (s.resources.len() > 0 || s.templates.len() > 0) && c.Resources == nil {
		c.Resources = &protocol.ResourcesCapability{ListChanged: true, Subscribe: true}
	}
	if s.prompts.len() > 0 && c.Prompts == nil {
		c.Prompts = &protocol.PromptsCapability{ListChanged: true}
	}
	if c.Completions == nil && s.hasCompleters() {
		c.Completions = &protocol.CompletionsCapability{}
	}
	if c.Logging == nil {
		c.Logging = &protocol.LoggingCapability{}
	}
	return c
}

// DeclareExtension advertises an extension (such as
// "io.modelcontextprotocol/skills") with its settings object, in the
// capabilities of both eras: a package that serves an extension's methods
// with [Server.HandleMethod] declares it here. A nil settings is declared
// as the empty object ("support with no settings"). Declaring a name again
// replaces its settings.
func (s *Server) DeclareExtension(name string, settings map[string]any) {
	if settings == nil {
		settings = map[string]any{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.extensions == nil {
		s.extensions = make(map[string]any)
	}
	s.extensions[name] = settings
}

// mergeExtensions returns a new map with the extensions of both, those of
// declared winning: the options' map is never modified.
func mergeExtensions(opts, declared map[string]any) map[string]any {
	out := make(map[string]any, len(opts)+len(declared))
	maps.Copy(out, opts)
	maps.Copy(out, declared)
	return out
}

func (s *Server) hasCompleters() bool {
	if s.opts.CompletionHandler != nil {
		return true
	}
	return len(s.completers) > 0
}

// supports reports whether the server serves revision v.
func (s *Server) supports(v string) bool { return slices.Contains(s.opts.Versions, v) }

// negotiate picks the legacy revision for an initialize request: the one
// the client asked for when the server speaks it, else the newest legacy
// revision the server speaks ("If the server supports the requested
// protocol version, it MUST respond with the same version. Otherwise, the
// server MUST respond with another protocol version it supports.")
func (s *Server) negotiate(requested string) string {
	if s.supports(requested) && !protocol.IsStateless(requested) {
		return requested
	}
	for _, v := range s.opts.Versions {
		if !protocol.IsStateless(v) {
			return v
		}
	}
	return protocol.LatestLegacyVersion
}

func (s *Server) statelessVersions() []string {
	var out []string
	for _, v := range s.opts.Versions {
		if protocol.IsStateless(v) {
			out = append(out, v)
		}
	}
	return out
}
