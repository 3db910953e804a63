// Package client implements MCP clients: connect to a server over any
// transport, find out which protocol era it speaks, and use it through a
// typed method per request.
//
// The era is detected as the specification describes (on stdio:
// "server/discover" first, falling back to initialize) or pinned with
// [Options.ProtocolVersion]. Both eras look the same to the caller:
// sampling, elicitation and roots callbacks answer legacy server-to-client
// requests and stateless input_required results alike.
package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/internal/mcpjson"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httperr"
)

// Transport opens the stream a client talks over: a launched subprocess
// (stdio), an in-memory pipe, an HTTP endpoint.
type Transport interface {
	Open(ctx context.Context) (jsonrpc.Stream, error)
}

// StreamTransport is a [Transport] over an already open stream.
type StreamTransport struct{ Stream jsonrpc.Stream }

// Open returns the stream.
func (t StreamTransport) Open(context.Context) (jsonrpc.Stream, error) { return t.Stream, nil }

// Options configure a [Client]. The zero value is usable.
type Options struct {
	// Info identifies the client to servers. Defaults to "ferry".
	Info protocol.Implementation
	// ProtocolVersion pins a revision and skips era detection. Empty
	// means detect: probe with server/discover, fall back to initialize.
	ProtocolVersion string
	// ProbeTimeout bounds the wait for the server/discover probe before
	// the client decides the server is legacy (default 5s). A stateless
	// server that was merely slow to start is still found: a failed
	// initialize after a timed-out probe is followed by a second probe.
	ProbeTimeout time.Duration
	// RequestTimeout is the default time a request may go without an
	// answer or a progress notification (reset by progress); zero means
	// none. MaxRequestTimeout bounds the whole request regardless of
	// progress; zero means none. Both can be changed per call with
	// [WithTimeout].
	RequestTimeout    time.Duration
	MaxRequestTimeout time.Duration
	// MaxInputRounds bounds the multi round-trip retries of one request
	// (default 10).
	MaxInputRounds int
	// LogLevel asks the server for log messages at this level and above:
	// logging/setLevel after initialize (legacy), or the logLevel of every
	// request (stateless). Empty asks for none from stateless servers and leaves
	// legacy servers at their default.
	LogLevel protocol.LoggingLevel

	// Sampling answers the server's requests for a model completion. Nil
	// means the client does not offer sampling.
	Sampling func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error)
	// Elicitation answers the server's questions to the user. Nil means
	// the client does not offer elicitation. ElicitationModes lists the
	// modes it handles ("form", "url"); empty means form only.
	Elicitation      func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error)
	ElicitationModes []string
	// Roots lists the client's roots. Nil means the client has none.
	Roots func(ctx context.Context) ([]protocol.Root, error)

	// OnProgress sees every progress notification; per-call progress
	// goes to the function given with [WithProgress].
	OnProgress func(p *protocol.ProgressParams)
	// OnLog sees the server's log messages.
	OnLog func(p *protocol.LoggingMessageParams)
	// OnListChanged sees tools, prompts and resources list changes; method
	// is the notification's (e.g. "notifications/tools/list_changed").
	OnListChanged func(method string)
	// OnResourceUpdated sees updates of subscribed resources.
	OnResourceUpdated func(uri string)
	// OnElicitationComplete sees the end of a URL-mode elicitation
	// (2025-11-25).
	OnElicitationComplete func(elicitationID string)

	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
	// MaxInFlight bounds the server-to-client requests handled at once.
	MaxInFlight int
	// Sending wraps every request the client sends, the first element
	// outermost: the handshake's server/discover or initialize included,
	// and each round of a multi round-trip request. It may answer a
	// request itself, or call next and look at or replace the result
	// (next returns the result's raw JSON). It runs on the caller's
	// goroutine.
	//
	// Receiving wraps the answering of every request the server puts to
	// the client (sampling, elicitation, roots; a legacy server's ping),
	// the first element outermost, in both eras: a legacy server's
	// server-to-client requests and a stateless server's input requests
	// alike. Next answers with the callbacks above.
	//
	// A client without middleware pays nothing for it.
	Sending, Receiving []intercept.Middleware
}

// Client is a connection to one MCP server. Its methods are safe for
// concurrent use.
type Client struct {
	opts   Options
	log    *slog.Logger
	stream jsonrpc.Stream
	conn   *jsonrpc2.Conn

	stateless  bool
	version    string
	serverInfo protocol.Implementation
	serverCaps protocol.ServerCapabilities
	instr      string
	supported  []string
	caps       protocol.ClientCapabilities
	capsJSON   []byte
	taskState  // the capabilities that declare the tasks extension

	logLevel  atomic.Pointer[protocol.LoggingLevel]
	metaCache metaCache
	// resultMetas decodes the _meta of results, mostly the same bytes.
	resultMetas mcpjson.MetaCache

	nextToken atomic.Int64
	mu        sync.Mutex
	progress  map[string]*callState
	subs      map[string]*Subscription

	// mirrors is set when the transport mirrors tool arguments into HTTP
	// headers; toolHeaders holds which, per tool, from tools/list.
	mirrors     bool
	toolHeaders map[string][]mcpheader.Param
	// recycler is the stream, when it takes back the memory of answers
	// (Lend, CallToolRaw's Release).
	recycler jsonrpc.Recycler
	// sending is Options.Sending around the connection, receiving
	// Options.Receiving around the callbacks; nil without any.
	sending, receiving intercept.Handler
	// maxBound bounds a call by MaxRequestTimeout (see send): made once,
	// as the options are only read and their error is made when the time
	// passes, rather than an allocation a call. Nil without the bound.
	maxBound *jsonrpcapi.CallOptions
}

// Connect opens t, finds out the server's protocol era and version, and
// returns the client. The child process or connection behind t is not
// tied to ctx: ctx bounds only the connecting; [Client.Close] ends it.
func Connect(ctx context.Context, t Transport, opts *Options) (*Client, error) {
	c := &Client{progress: map[string]*callState{}, subs: map[string]*Subscription{}}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Info.Name == "" {
		c.opts.Info = protocol.Implementation{Name: "ferry", Version: "0.1.0"}
	}
	if c.opts.ProbeTimeout <= 0 {
		c.opts.ProbeTimeout = 5 * time.Second
	}
	if c.opts.MaxInputRounds <= 0 {
		c.opts.MaxInputRounds = 10
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	lvl := c.opts.LogLevel
	c.logLevel.Store(&lvl)
	c.caps = c.capabilities()
	c.capsJSON, _ = json.Marshal(&c.caps)
	c.buildChains()
	if max := c.opts.MaxRequestTimeout; max > 0 {
		c.maxBound = &jsonrpcapi.CallOptions{Timeout: max, TimeoutErr: timeoutError}
	}

	stream, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	c.stream = stream
	if m, ok := jsonrpc.As[jsonrpc.HeaderMirror](stream); ok {
		c.mirrors = m.MirrorsHeaders()
	}
	c.recycler, _ = jsonrpc.As[jsonrpc.Recycler](stream)
	c.conn = jsonrpc2.NewConn(context.WithoutCancel(ctx), stream, &jsonrpc2.ConnOptions{
		Handler:      &handler{c: c},
		MaxInFlight:  c.opts.MaxInFlight,
		CallerReads:  true,
		CancelMethod: protocol.NotificationCancelled,
		Logger:       c.log,
	})
	if err := c.handshake(ctx); err != nil {
		c.conn.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) capabilities() protocol.ClientCapabilities {
	var caps protocol.ClientCapabilities
	if c.opts.Sampling != nil {
		caps.Sampling = &protocol.SamplingCapability{}
	}
	if c.opts.Elicitation != nil {
		caps.Elicitation = &protocol.ElicitationCapability{}
		modes := c.opts.ElicitationModes
		if len(modes) == 0 {
			modes = []string{protocol.ElicitForm}
		}
		if slices.Contains(modes, protocol.ElicitForm) {
			caps.Elicitation.Form = map[string]any{}
		}
		if slices.Contains(modes, protocol.ElicitURL) {
			caps.Elicitation.URL = map[string]any{}
		}
	}
	if c.opts.Roots != nil {
		caps.Roots = &protocol.RootsCapability{}
	}
	return caps
}

// handshake settles the era and version.
func (c *Client) handshake(ctx context.Context) error {
	if v := c.opts.ProtocolVersion; v != "" {
		if !protocol.IsSupported(v) {
			return fmt.Errorf("client: unsupported protocol version %q", v)
		}
		if protocol.IsStateless(v) {
			return c.discover(ctx, v)
		}
		return c.initialize(ctx, v)
	}
	// stdio: "A client that supports both modern ... and a legacy version
	// ... SHOULD probe with server/discover before sending any other
	// request, setting its preferred modern version in _meta."
	pctx, cancel := context.WithTimeoutCause(ctx, c.opts.ProbeTimeout, errProbeTimeout)
	err := c.discover(pctx, protocol.LatestVersion)
	cancel()
	if err == nil {
		return nil
	}
	if v := legacyOnly(err); v != "" {
		// An UnsupportedProtocolVersionError says "Use one of the versions
		// in its advertised supported list": when that list holds legacy
		// revisions only (a dual-era implementation configured for them,
		// such as the official Go SDK's server with
		// SupportedProtocolVersions, or ferry's with Options.Versions),
		// the way to use one is initialize.
		c.log.Debug("client: the server lists only legacy revisions, trying initialize", "version", v, "error", err)
		return c.initialize(ctx, v)
	}
	if !isLegacySign(err) {
		return err
	}
	c.log.Debug("client: server/discover failed, trying initialize", "error", err)
	ierr := c.initialize(ctx, protocol.LatestLegacyVersion)
	var rpcErr *jsonrpc.Error
	if ierr != nil && errors.Is(err, errProbeTimeout) && errors.As(ierr, &rpcErr) {
		// A server too slow to answer the probe in time may still be
		// stateless: it rejected initialize, so ask again, without a limit.
		if derr := c.discover(ctx, protocol.LatestVersion); derr == nil {
			return nil
		}
	}
	return ierr
}

var errProbeTimeout = errors.New("no answer to server/discover in time")

// isLegacySign reports whether a failed probe means "legacy server": any
// error answer that is not a recognised stateless one ("The fallback MUST
// NOT be keyed to one specific error code"), a refusal by HTTP status
// other than 401 and 403 (which initialize would get too), or no answer
// in time. A closed connection or a network failure is not: the server
// is gone.
func isLegacySign(err error) bool {
	if errors.Is(err, errProbeTimeout) {
		return true
	}
	var se *httperr.StatusError
	if errors.As(err, &se) {
		return se.StatusCode != 401 && se.StatusCode != 403
	}
	var e *jsonrpc.Error
	return errors.As(err, &e) && e.Code != protocol.CodeUnsupportedProtocolVersion
}

// legacyOnly returns the newest legacy revision this client speaks named
// by an UnsupportedProtocolVersionError whose supported list holds no
// stateless revision this client speaks, or "".
func legacyOnly(err error) string {
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != protocol.CodeUnsupportedProtocolVersion {
		return ""
	}
	var data protocol.UnsupportedProtocolVersionData
	if json.Unmarshal(e.Data, &data) != nil || pickStateless(data.Supported) != "" {
		return ""
	}
	for _, v := range protocol.SupportedVersions() {
		if protocol.IsLegacy(v) && slices.Contains(data.Supported, v) {
			return v
		}
	}
	return ""
}

// discover probes with server/discover in revision v and, on success,
// settles on the newest stateless revision both sides speak.
func (c *Client) discover(ctx context.Context, v string) error {
	return c.discoverAs(ctx, v, false)
}

// discoverAs is discover; retried says whether v is already the answer
// to an UnsupportedProtocolVersionError.
func (c *Client) discoverAs(ctx context.Context, v string, retried bool) error {
	c.stateless, c.version = true, v
	var res protocol.DiscoverResult
	err := c.callResult(ctx, protocol.MethodDiscover, c.withMeta(nil, nil), &res)
	var e *jsonrpc.Error
	if errors.As(err, &e) && e.Code == protocol.CodeUnsupportedProtocolVersion {
		// "the server is modern but does not support the requested
		// version. Use one of the versions in its advertised supported
		// list. Do not fall back to initialize."
		var data protocol.UnsupportedProtocolVersionData
		json.Unmarshal(e.Data, &data)
		// The list may name v itself (a server that refused it once, for
		// example during a rolling upgrade): "select a mutually supported
		// version from the supported list and retry the request" holds
		// for it too, once.
		next := pickStateless(data.Supported)
		if next == "" || retried {
			c.stateless = false
			return fmt.Errorf("client: the server supports only %v, none of which this client speaks in the stateless era: %w", data.Supported, err)
		}
		return c.discoverAs(ctx, next, true)
	}
	if err != nil {
		c.stateless = false
		return err
	}
	if !slices.Contains(res.SupportedVersions, v) {
		if next := pickStateless(res.SupportedVersions); next != "" {
			c.version = next
		} else if len(res.SupportedVersions) > 0 {
			// A server listing only legacy revisions: talk legacy.
			c.stateless = false
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "server/discover lists no stateless revision"}
		}
	}
	c.supported = res.SupportedVersions
	c.serverCaps = res.Capabilities
	c.instr = res.Instructions
	c.serverInfo = metaServerInfo(res.Meta)
	return nil
}

func pickStateless(supported []string) string {
	for _, v := range protocol.SupportedVersions() {
		if protocol.IsStateless(v) && slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

func metaServerInfo(m protocol.Meta) protocol.Implementation {
	var impl protocol.Implementation
	if v, ok := m[protocol.MetaServerInfo]; ok {
		raw, _ := json.Marshal(v)
		json.Unmarshal(raw, &impl)
	}
	return impl
}

// initialize runs the legacy handshake asking for revision v.
func (c *Client) initialize(ctx context.Context, v string) error {
	c.stateless = false
	var res protocol.InitializeResult
	err := c.callResult(ctx, protocol.MethodInitialize, &protocol.InitializeParams{
		ProtocolVersion: v, Capabilities: c.caps, ClientInfo: c.opts.Info,
	}, &res)
	if err != nil {
		return fmt.Errorf("client: initialize: %w", err)
	}
	// "If the client does not support the version in the server's
	// response, it SHOULD disconnect."
	if !protocol.IsSupported(res.ProtocolVersion) || protocol.IsStateless(res.ProtocolVersion) {
		return fmt.Errorf("client: the server answered initialize with protocol version %q, which this client does not speak", res.ProtocolVersion)
	}
	c.version = res.ProtocolVersion
	c.serverInfo = res.ServerInfo
	c.serverCaps = res.Capabilities
	c.instr = res.Instructions
	if err := c.conn.Notify(ctx, protocol.NotificationInitialized, nil); err != nil {
		return fmt.Errorf("client: initialized: %w", err)
	}
	if lvl := c.opts.LogLevel; lvl != "" && c.serverCaps.Logging != nil {
		if err := c.callResult(ctx, protocol.MethodSetLevel, &protocol.SetLevelParams{Level: lvl}, nil); err != nil {
			c.log.Warn("client: logging/setLevel failed", "error", err)
		}
	}
	return nil
}

// Close ends the connection; for a launched server this runs the stdio
// shutdown sequence (close stdin, wait, SIGTERM, wait, SIGKILL).
func (c *Client) Close() error {
	c.conn.Close()
	c.conn.Wait()
	return nil
}

// Done is closed when the connection ends, for whatever reason.
func (c *Client) Done() <-chan struct{} { return c.conn.Done() }

// Err returns why the connection ended, or nil while it is open.
func (c *Client) Err() error { return c.conn.Err() }

// Stream returns the stream the client talks over (for example to read a
// launched server's stderr).
func (c *Client) Stream() jsonrpc.Stream { return c.stream }

// Stateless reports whether the server is spoken to in the stateless era.
func (c *Client) Stateless() bool { return c.stateless }

// ProtocolVersion returns the revision in use.
func (c *Client) ProtocolVersion() string { return c.version }

// ServerInfo returns the server's name and version.
func (c *Client) ServerInfo() protocol.Implementation { return c.serverInfo }

// ServerCapabilities returns what the server offers.
func (c *Client) ServerCapabilities() protocol.ServerCapabilities { return c.serverCaps }

// Instructions returns the server's instructions for the model.
func (c *Client) Instructions() string { return c.instr }

// SupportedVersions returns the revisions a stateless server listed in
// server/discover.
func (c *Client) SupportedVersions() []string { return c.supported }
