package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/internal/mcpjson"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// request sends a one-shot request and decodes its result into out.
func request[T any](c *Client, ctx context.Context, method string, user protocol.Meta, params any) (*T, error) {
	m, err := c.call(ctx, method, user, func(meta wireMeta) any { return c.paramsWith(meta, params) })
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(m.Result, out); err != nil {
		return nil, fmt.Errorf("%s: invalid result: %w", method, err)
	}
	return out, nil
}

// decodeResult decodes a result, tool results without reflection.
func (c *Client) decodeResult(raw []byte, out any) error {
	switch r := out.(type) {
	case *protocol.CallToolResult:
		return mcpjson.DecodeCallToolResult(raw, r, &c.resultMetas)
	case *rawResult:
		return r.read(raw)
	}
	return json.Unmarshal(raw, out)
}

// rawResult is a result left as its JSON, with only its resultType read
// (for the multi round-trip requests of a stateless server).
type rawResult struct {
	protocol.ResultFields
	raw jsontext.Value
}

// readFrom reads the result of m, whose resultType the decoder picked
// out while it validated it: a 64 KiB result is not walked again.
func (r *rawResult) readFrom(m *jsonrpc.Message) error {
	if sn := jsonrpc2.Meta(m); sn.ResultSeen {
		r.raw = m.Result
		return r.resultType(sn.ResultType, sn.ResultType != nil)
	}
	return r.read(m.Result) // a message not decoded: no sniff
}

func (r *rawResult) read(raw []byte) error {
	r.raw = raw
	v, ok, err := jsonrpc2.Member(raw, "resultType")
	if err != nil {
		return err
	}
	return r.resultType(v, ok)
}

// resultType reads the raw resultType v, when ok.
func (r *rawResult) resultType(v jsontext.Value, ok bool) error {
	if ok && string(v) != "null" {
		rt, err := jsonrpc2.Unquote(v)
		if err != nil {
			return fmt.Errorf("resultType: %w", err)
		}
		r.ResultType = rt
	}
	return nil
}

// roundTrips sends a request that a stateless server may answer with
// input_required, answers the server's questions through the client's
// callbacks, and retries until the result is complete.
func roundTrips[T any](c *Client, ctx context.Context, method string, user protocol.Meta, mp protocol.MRTRParams,
	fields func(*T) *protocol.ResultFields, build func(meta wireMeta, mp protocol.MRTRParams) any) (*T, *jsonrpc.Message, error) {
	for round := 0; ; round++ {
		m, err := c.call(ctx, method, user, func(meta wireMeta) any { return build(meta, mp) })
		if err != nil {
			return nil, nil, err
		}
		out := new(T)
		if r, ok := any(out).(*rawResult); ok {
			err = r.readFrom(m)
		} else {
			err = c.decodeResult(m.Result, out)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: invalid result: %w", method, err)
		}
		switch rt := fields(out).ResultType; rt {
		case "", protocol.ResultComplete:
			// "clients MUST treat an absent resultType as complete"
			return out, m, nil
		case protocol.ResultInputRequired:
		case protocol.ResultTask:
			if acceptsTasks(ctx) && method == protocol.MethodToolsCall {
				return out, m, nil // the caller reads the task in m
			}
			fallthrough
		default:
			// "A resultType of any value unrecognized by the client MUST
			// be considered invalid."
			return nil, nil, fmt.Errorf("%s: unrecognised resultType %q", method, rt)
		}
		if round >= c.opts.MaxInputRounds {
			return nil, nil, fmt.Errorf("%s: the server still wants input after %d rounds", method, round)
		}
		var ir protocol.InputRequiredResult
		if err := json.Unmarshal(m.Result, &ir); err != nil {
			return nil, nil, fmt.Errorf("%s: invalid input_required result: %w", method, err)
		}
		if len(ir.InputRequests) == 0 && ir.RequestState == "" {
			return nil, nil, fmt.Errorf("%s: input_required result without inputRequests or requestState", method)
		}
		responses, err := c.answerAll(ctx, ir.InputRequests)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", method, err)
		}
		// "the client MUST echo back the exact value of that field when
		// retrying"; a new request id comes with the new call.
		mp = protocol.MRTRParams{InputResponses: responses, RequestState: ir.RequestState}
	}
}

// answerAll answers a stateless server's input requests with the client's
// callbacks.
func (c *Client) answerAll(ctx context.Context, reqs map[string]protocol.InputRequest) (map[string]jsontext.Value, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	out := make(map[string]jsontext.Value, len(reqs))
	for key, r := range reqs {
		res, err := c.answerRequest(ctx, jsonrpc.ID{}, r.Method, r.Params)
		if err != nil {
			return nil, fmt.Errorf("answering %s (%s): %w", key, r.Method, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		out[key] = raw
	}
	return out, nil
}

// answer runs the callback for a server-to-client request, whichever era
// it came in.
func (c *Client) answer(ctx context.Context, method string, params jsontext.Value) (any, error) {
	switch method {
	case protocol.MethodPing:
		return &protocol.EmptyResult{}, nil
	case protocol.MethodCreateMessage:
		if c.opts.Sampling == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not offer sampling")
		}
		var p protocol.CreateMessageParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, err
		}
		return c.opts.Sampling(ctx, &p)
	case protocol.MethodElicit:
		if c.opts.Elicitation == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not offer elicitation")
		}
		var p protocol.ElicitParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, err
		}
		return c.opts.Elicitation(ctx, &p)
	case protocol.MethodListRoots:
		if c.opts.Roots == nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "this client does not offer roots")
		}
		roots, err := c.opts.Roots(ctx)
		if err != nil {
			return nil, err
		}
		if roots == nil {
			roots = []protocol.Root{}
		}
		return &protocol.ListRootsResult{Roots: roots}, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s", method)
}

func unmarshalParams(params jsontext.Value, out any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, out); err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

// callToolWire is tools/call on the wire: a struct rather than a map so
// that a call costs one pass of the encoder.
type callToolWire struct {
	Meta      wireMeta `json:"_meta,omitzero"`
	Name      string   `json:"name"`
	Arguments any      `json:"arguments,omitempty"`
	protocol.MRTRParams
	Task *protocol.TaskMetadata `json:"task,omitzero"`

	headers []header // mirrored arguments (x-mcp-header)
}

type header struct{ name, value string }

// Mirror gives an HTTP transport what it mirrors into headers: the
// stateless MCP-Protocol-Version, Mcp-Name and Mcp-Param-* headers.
func (w *callToolWire) Mirror(set func(name, value string)) {
	if w.Meta.c == nil || !w.Meta.c.stateless {
		return
	}
	set("Mcp-Protocol-Version", w.Meta.c.version)
	set("Mcp-Name", mcpheader.Encode(w.Name))
	for _, h := range w.headers {
		set(h.name, h.value)
	}
}

// CallTool calls a tool. A tool that fails reports it in the result
// (IsError); the error return is for protocol and transport failures.
// opts ([Lend], [AsTask]) change how the call is made.
func (c *Client) CallTool(ctx context.Context, p *protocol.CallToolParams, opts ...CallOption) (*protocol.CallToolResult, error) {
	var args any
	if len(p.Arguments) > 0 {
		args = p.Arguments
	}
	return c.callWith(ctx, &toolCall{name: p.Name, args: args, user: p.Meta, mp: p.MRTRParams, task: p.Task}, opts)
}

// Call calls a tool with arguments given as any value that marshals to a
// JSON object (a struct or a map). opts ([Lend], [AsTask]) change how the
// call is made.
func (c *Client) Call(ctx context.Context, name string, args any, opts ...CallOption) (*protocol.CallToolResult, error) {
	return c.callWith(ctx, &toolCall{name: name, args: args}, opts)
}

// A CallOption changes how [Client.Call] or [Client.CallTool] makes a
// call: [Lend] lets the result share the memory of the answer, [AsTask]
// lets the server run the call as a task. A value rather than a function,
// so that giving one costs a call no allocation.
type CallOption struct {
	release *func()
	task    *TaskOptions
}

// Lend lets the call's result share the memory the transport read the
// answer into, as bufio.Scanner's caller borrows the slice Bytes returns:
// the call sets *release to the function that gives that memory back, to
// read another answer into (over Streamable HTTP, a large result then
// makes no garbage for the collector). After release, neither the result
// nor its strings may be used: copy what outlives it (strings.Clone).
// The call always sets *release, to a function that does nothing when
// nothing was lent or the call failed; a caller that never calls it
// leaves the memory to the garbage collector.
func Lend(release *func()) CallOption { return CallOption{release: release} }

// noRelease is the release of a call that lent nothing.
func noRelease() {}

// toolCall is one tools/call as the client's methods give it.
type toolCall struct {
	name string
	args any
	user protocol.Meta
	mp   protocol.MRTRParams
	task *protocol.TaskMetadata
}

// callWith makes the call tc with the options opts.
func (c *Client) callWith(ctx context.Context, tc *toolCall, opts []CallOption) (*protocol.CallToolResult, error) {
	var o CallOption
	for _, opt := range opts {
		o.release = cmp.Or(opt.release, o.release)
		o.task = cmp.Or(opt.task, o.task)
	}
	if o.release != nil {
		*o.release = noRelease
	}
	if o.task != nil {
		return c.callTask(ctx, tc, o.task)
	}
	res, m, err := c.callTool(ctx, tc.name, tc.args, tc.user, tc.mp, tc.task)
	if err == nil && o.release != nil {
		*o.release = c.releaser(m)
	}
	return res, err
}

// releaser gives back the memory of m, when the stream lent it.
func (c *Client) releaser(m *jsonrpc.Message) func() {
	r := c.recycler
	if r == nil || m.Buffer == nil {
		return noRelease
	}
	return func() { r.Recycle(m) }
}

// CallToolRaw is [Client.CallTool] for a caller that passes the result on
// rather than reading it (a gateway), or reads it only while it holds it:
// res.Value is the result's JSON (a jsontext.Value) as the server sent
// it, undecoded, and res.IsError whether it is a tool error, as the
// decoder found it on its way. A stateless server's input requests are
// answered, and the call retried, as CallTool does.
//
// The result may be in memory the transport lends (a large answer over
// stdio or Streamable HTTP): res.Release, when not nil, gives it back to
// read another answer into, once the caller is done with the result (a
// gateway, once the result is written to its own client; a client that
// decoded what it keeps, with copies of its strings). After it, neither
// the result nor anything that shares its memory may be used. A caller
// that never calls it leaves the memory to the garbage collector.
//
// The arguments, p.Arguments, are taken as they are, and may be written
// from their memory, uncopied: they must not change until the call
// returns. (A transport that keeps a request beyond its Write, queued
// behind others or left to finish in the background, copies them first.)
func (c *Client) CallToolRaw(ctx context.Context, p *protocol.CallToolParams) (intercept.Result, error) {
	raw, m, err := c.callToolRaw(ctx, p)
	if err != nil {
		return intercept.Result{}, err
	}
	res := intercept.Result{Value: raw, IsError: isToolError(m)}
	if m.Buffer != nil && c.recycler != nil {
		res.Release = c.releaser(m)
	}
	return res, nil
}

func (c *Client) callToolRaw(ctx context.Context, p *protocol.CallToolParams) (jsontext.Value, *jsonrpc.Message, error) {
	var args any
	if len(p.Arguments) > 0 {
		args = stableArgs(p.Arguments)
	}
	res, m, err := callToolAs(c, ctx, p.Name, args, p.Meta, p.MRTRParams, p.Task,
		func(r *rawResult) *protocol.ResultFields { return &r.ResultFields })
	if err != nil {
		return nil, nil, err
	}
	return res.raw, m, nil
}

func (c *Client) callTool(ctx context.Context, name string, args any, user protocol.Meta, mp protocol.MRTRParams, task *protocol.TaskMetadata) (*protocol.CallToolResult, *jsonrpc.Message, error) {
	return callToolAs(c, ctx, name, args, user, mp, task,
		func(r *protocol.CallToolResult) *protocol.ResultFields { return &r.ResultFields })
}

// callToolAs calls a tool and decodes its result as a T.
func callToolAs[T any](c *Client, ctx context.Context, name string, args any, user protocol.Meta, mp protocol.MRTRParams, task *protocol.TaskMetadata,
	fields func(*T) *protocol.ResultFields) (*T, *jsonrpc.Message, error) {
	for retried := false; ; retried = true {
		args, headers := c.mirroredArgs(name, args)
		res, m, err := roundTrips(c, ctx, protocol.MethodToolsCall, user, mp, fields,
			func(meta wireMeta, mp protocol.MRTRParams) any {
				return &callToolWire{Meta: meta, Name: name, Arguments: args, MRTRParams: mp, Task: task, headers: headers}
			})
		if err == nil || retried || !c.mirrors || !isHeaderMismatch(err) {
			return res, m, err
		}
		// "If the server rejects a request with a HeaderMismatch error
		// ... the client SHOULD call tools/list to check for changes to
		// the tool's inputSchema, then retry the original request."
		if _, lerr := Collect(c.Tools(ctx)); lerr != nil {
			return res, m, err
		}
	}
}

// isHeaderMismatch reports whether err is the server's HeaderMismatch
// error. It is a function of its own so that the error variable errors.As
// needs is only made when a call failed.
func isHeaderMismatch(err error) bool {
	var e *jsonrpc.Error
	return errors.As(err, &e) && e.Code == protocol.CodeHeaderMismatch
}

// mirroredArgs computes the Mcp-Param-* headers of a call to a tool whose
// input schema asks for them (known from tools/list), encoding the
// arguments once so that their values can be read.
func (c *Client) mirroredArgs(name string, args any) (any, []header) {
	if !c.mirrors || !c.stateless {
		return args, nil
	}
	c.mu.Lock()
	params := c.toolHeaders[name]
	c.mu.Unlock()
	if len(params) == 0 {
		return args, nil
	}
	var raw jsontext.Value
	switch v := args.(type) {
	case jsontext.Value:
		raw = v
	case stableArgs:
		raw = jsontext.Value(v)
	default:
		b, err := json.Marshal(args)
		if err != nil {
			return args, nil // the call reports the encoding error
		}
		raw = b
		args = raw // sent as encoded here, not encoded again
	}
	var headers []header
	for _, p := range params {
		if v, ok := mcpheader.Lookup(raw, p); ok {
			if s, ok := mcpheader.Value(v); ok {
				headers = append(headers, header{p.Header, s})
			}
		}
	}
	return args, headers
}

// stableArgs are a tool's arguments as raw JSON in memory that does not
// change while the call runs: CallToolRaw's promise, which a gateway
// keeps. A stdio transport then writes long ones from there, when it
// writes the request within its Write (jsonfast.Out.RawRef, writev),
// instead of copying them into the request's buffer.
type stableArgs jsontext.Value

// MarshalJSON returns the arguments, for encoders other than AppendOut.
func (a stableArgs) MarshalJSON() ([]byte, error) { return a, nil }

// checkTools drops the tools a header-mirroring transport must refuse
// ("the client MUST exclude the invalid tool from the result of
// tools/list") and remembers the mirrored parameters of the others.
func (c *Client) checkTools(tools []protocol.Tool) []protocol.Tool {
	if !c.mirrors || !c.stateless {
		return tools
	}
	out := tools[:0]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.toolHeaders == nil {
		c.toolHeaders = map[string][]mcpheader.Param{}
	}
	for _, t := range tools {
		ps, err := mcpheader.Params(t.InputSchema)
		if err != nil {
			c.log.Warn("client: refusing tool with an invalid x-mcp-header annotation", "tool", t.Name, "reason", err)
			continue
		}
		if len(ps) > 0 {
			c.toolHeaders[t.Name] = ps
		} else {
			delete(c.toolHeaders, t.Name)
		}
		out = append(out, t)
	}
	return out
}

// GetPrompt renders a prompt.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*protocol.GetPromptResult, error) {
	return c.GetPromptWith(ctx, &protocol.GetPromptParams{Name: name, Arguments: args})
}

// GetPromptWith is [Client.GetPrompt] with the params whole: their _meta
// (trace context, an application's own members) goes with the request.
func (c *Client) GetPromptWith(ctx context.Context, p *protocol.GetPromptParams) (*protocol.GetPromptResult, error) {
	res, _, err := roundTrips(c, ctx, protocol.MethodPromptsGet, p.Meta, p.MRTRParams,
		func(r *protocol.GetPromptResult) *protocol.ResultFields { return &r.ResultFields },
		func(meta wireMeta, mp protocol.MRTRParams) any {
			return c.paramsWith(meta, &protocol.GetPromptParams{Name: p.Name, Arguments: p.Arguments, MRTRParams: mp})
		})
	return res, err
}

// ReadResource reads a resource.
func (c *Client) ReadResource(ctx context.Context, uri string) (*protocol.ReadResourceResult, error) {
	return c.ReadResourceWith(ctx, &protocol.ReadResourceParams{URI: uri})
}

// ReadResourceWith is [Client.ReadResource] with the params whole: their
// _meta (trace context, an application's own members) goes with the
// request.
func (c *Client) ReadResourceWith(ctx context.Context, p *protocol.ReadResourceParams) (*protocol.ReadResourceResult, error) {
	res, _, err := roundTrips(c, ctx, protocol.MethodResourcesRead, p.Meta, p.MRTRParams,
		func(r *protocol.ReadResourceResult) *protocol.ResultFields { return &r.ResultFields },
		func(meta wireMeta, mp protocol.MRTRParams) any {
			return c.paramsWith(meta, &protocol.ReadResourceParams{URI: p.URI, MRTRParams: mp})
		})
	return res, err
}

// ListTools returns one page of tools.
func (c *Client) ListTools(ctx context.Context, cursor string) (*protocol.ListToolsResult, error) {
	res, err := request[protocol.ListToolsResult](c, ctx, protocol.MethodToolsList, nil, &protocol.PaginatedParams{Cursor: cursor})
	if err != nil {
		return nil, err
	}
	res.Tools = c.checkTools(res.Tools)
	return res, nil
}

// ListResources returns one page of resources.
func (c *Client) ListResources(ctx context.Context, cursor string) (*protocol.ListResourcesResult, error) {
	return request[protocol.ListResourcesResult](c, ctx, protocol.MethodResourcesList, nil, &protocol.PaginatedParams{Cursor: cursor})
}

// ListResourceTemplates returns one page of resource templates.
func (c *Client) ListResourceTemplates(ctx context.Context, cursor string) (*protocol.ListResourceTemplatesResult, error) {
	return request[protocol.ListResourceTemplatesResult](c, ctx, protocol.MethodResourcesTemplatesList, nil, &protocol.PaginatedParams{Cursor: cursor})
}

// ListPrompts returns one page of prompts.
func (c *Client) ListPrompts(ctx context.Context, cursor string) (*protocol.ListPromptsResult, error) {
	return request[protocol.ListPromptsResult](c, ctx, protocol.MethodPromptsList, nil, &protocol.PaginatedParams{Cursor: cursor})
}

// Complete asks the server to complete an argument.
func (c *Client) Complete(ctx context.Context, p *protocol.CompleteParams) (*protocol.CompleteResult, error) {
	q := *p
	q.Meta = nil
	return request[protocol.CompleteResult](c, ctx, protocol.MethodComplete, p.Meta, &q)
}

// Discover asks a stateless server for its versions, capabilities and
// identity (server/discover).
func (c *Client) Discover(ctx context.Context) (*protocol.DiscoverResult, error) {
	if !c.stateless {
		return nil, errors.New("server/discover: the server is legacy")
	}
	return request[protocol.DiscoverResult](c, ctx, protocol.MethodDiscover, nil, nil)
}

// Ping checks that the server answers: ping for a legacy server,
// server/discover for a stateless one (which has no ping).
func (c *Client) Ping(ctx context.Context) error {
	if c.stateless {
		_, err := c.Discover(ctx)
		return err
	}
	_, err := request[protocol.EmptyResult](c, ctx, protocol.MethodPing, nil, nil)
	return err
}

// SetLogLevel asks for log messages at level and above: logging/setLevel
// for a legacy server, the logLevel of every later request for a stateless
// one.
func (c *Client) SetLogLevel(ctx context.Context, level protocol.LoggingLevel) error {
	c.logLevel.Store(&level)
	if c.stateless {
		return nil
	}
	_, err := request[protocol.EmptyResult](c, ctx, protocol.MethodSetLevel, nil, &protocol.SetLevelParams{Level: level})
	return err
}

// Tools iterates over every tool, page by page.
func (c *Client) Tools(ctx context.Context) iter.Seq2[protocol.Tool, error] {
	return paginate(ctx, func(cursor string) ([]protocol.Tool, string, error) {
		r, err := c.ListTools(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		return r.Tools, r.NextCursor, nil
	})
}

// Resources iterates over every resource, page by page.
func (c *Client) Resources(ctx context.Context) iter.Seq2[protocol.Resource, error] {
	return paginate(ctx, func(cursor string) ([]protocol.Resource, string, error) {
		r, err := c.ListResources(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
}

// ResourceTemplates iterates over every resource template, page by page.
func (c *Client) ResourceTemplates(ctx context.Context) iter.Seq2[protocol.ResourceTemplate, error] {
	return paginate(ctx, func(cursor string) ([]protocol.ResourceTemplate, string, error) {
		r, err := c.ListResourceTemplates(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
}

// Prompts iterates over every prompt, page by page.
func (c *Client) Prompts(ctx context.Context) iter.Seq2[protocol.Prompt, error] {
	return paginate(ctx, func(cursor string) ([]protocol.Prompt, string, error) {
		r, err := c.ListPrompts(ctx, cursor)
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
}

// maxPages stops a server that hands out cursors forever.
const maxPages = 10000

func paginate[T any](ctx context.Context, page func(cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		seen := map[string]bool{}
		for n := 0; ; n++ {
			items, next, err := page(cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if seen[next] || n >= maxPages {
				var zero T
				yield(zero, fmt.Errorf("pagination: the server repeated cursor %q", next))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// Collect gathers an iterator's items, stopping at the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for it, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, it)
	}
	return out, nil
}
