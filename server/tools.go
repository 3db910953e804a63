package server

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/jsonschema"
	"github.com/ferrymcp/ferry/protocol"
)

// ToolHandler handles calls of a tool whose arguments arrive as raw JSON
// (already validated against the tool's InputSchema).
//
// An error it returns becomes a result with isError set and the error's
// text, so that the model can see what went wrong and adjust; return a
// *[jsonrpc.Error] instead to send a protocol error.
type ToolHandler func(ctx context.Context, req *Request, args jsontext.Value) (*protocol.CallToolResult, error)

// TypedToolHandler handles calls of a tool with typed input and output.
// Out may be a struct (sent as structuredContent, described by the tool's
// outputSchema, with its JSON as a text fallback), a string (sent as text)
// or *[protocol.CallToolResult] (sent as is).
type TypedToolHandler[In, Out any] func(ctx context.Context, req *Request, in In) (Out, error)

// toolFunc is what a tool entry runs: a [ToolHandler], or a typed
// handler's wrapper, which may answer with a [textOnlyResult].
type toolFunc func(ctx context.Context, req *Request, args jsontext.Value) (any, error)

type toolEntry struct {
	// explicitStart: the handler starts the task itself (AddTaskTool).
	explicitStart bool
	tool          protocol.Tool
	handler       toolFunc
	// validator checks the arguments before handler runs; nil when the
	// handler checks them itself as it decodes them (see stringArgs).
	validator *jsonschema.Validator
	// headers are the arguments the input schema mirrors into HTTP
	// headers (x-mcp-header), which the Streamable HTTP handler checks;
	// nil when there are none or the annotations are invalid (clients
	// refuse such a tool anyway).
	headers []mcpheader.Param
}

// AddTool adds (or replaces) a tool with a raw handler. t.InputSchema is
// the JSON Schema arguments are validated against before h runs; nil means
// any object.
//
// It panics, as http.Handle does for a bad pattern, on a programming error
// that would make every call fail or some client stumble: a name outside
// the specification's rules (1 to 128 of A-Z, a-z, 0-9, '_', '-', '.'), an
// input schema that does not compile or whose root is not of type
// "object", or a nil handler. [CheckTool] reports the same without
// panicking. Schemas beyond the built-in validator (composition and
// conditional keywords, dialects other than 2020-12 and draft-07) need a
// schema engine in [Options].SchemaEngine, such as jsonschema/full's.
func (s *Server) AddTool(t *protocol.Tool, h ToolHandler) { s.putTool(s.rawTool(t, h)) }

// rawTool is the registry entry of a tool with a raw handler.
func (s *Server) rawTool(t *protocol.Tool, h ToolHandler) *toolEntry {
	tool := *t
	mustTool(&tool, h == nil)
	if len(tool.InputSchema) == 0 {
		tool.InputSchema = jsontext.Value(`{"type":"object"}`)
	}
	v, err := s.compileSchema(tool.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("server: tool %q: invalid input schema: %v", tool.Name, err))
	}
	return &toolEntry{tool: tool, handler: func(ctx context.Context, req *Request, args jsontext.Value) (any, error) {
		return h(ctx, req, args)
	}, validator: v}
}

// AddTool adds (or replaces) a typed tool: the input schema is inferred
// from In (see [jsonschema.Infer] for the struct tags it reads) unless
// t.InputSchema is set, and so is the output schema from Out when Out is a
// struct. Arguments are validated and decoded into In before h runs.
//
// In must be a struct (or a map, or [jsontext.Value]): a tool's arguments
// are a JSON object. The defaults of its fields (default=V in a
// jsonschema tag, or "default" in a t.InputSchema's top-level properties)
// are applied: a field whose argument is omitted holds its default, not
// zero. Defaults that would share memory between calls (slices, maps,
// pointers) stay annotations.
//
// It panics where [Server.AddTool] does, and on an In whose schema is not
// an object (In=int, for example).
func AddTool[In, Out any](s *Server, t *protocol.Tool, h TypedToolHandler[In, Out]) {
	s.putTool(typedTool(s, t, h))
}

// typedTool is the registry entry of a typed tool of s.
func typedTool[In, Out any](s *Server, t *protocol.Tool, h TypedToolHandler[In, Out]) *toolEntry {
	tool := *t
	mustTool(&tool, h == nil)
	var validator *jsonschema.Validator
	var err error
	if len(tool.InputSchema) == 0 {
		tool.InputSchema, validator, err = inferSchema(reflect.TypeFor[In]())
	} else {
		validator, err = s.compileSchema(tool.InputSchema)
	}
	if err == nil {
		err = checkObjectSchema(tool.InputSchema)
	}
	if err != nil {
		panic(fmt.Sprintf("server: tool %q: input schema: %v", tool.Name, err))
	}
	defaults := inputDefaults[In](tool.InputSchema)
	outType := reflect.TypeFor[Out]()
	structured := isStructured(outType)
	if structured && len(tool.OutputSchema) == 0 {
		if tool.OutputSchema, _, err = inferSchema(outType); err != nil {
			panic(fmt.Sprintf("server: tool %q: output schema: %v", tool.Name, err))
		}
	}
	required, exact := stringArgs(reflect.TypeFor[In](), validator)
	handler := func(ctx context.Context, req *Request, args jsontext.Value) (any, error) {
		in := defaults
		switch {
		case exact && jsonfast.DecodeStringFields(args, &in, required):
			// Decoded and, in the same pass, found valid.
		case exact:
			if err := validator.ValidateTrusted(args); err != nil {
				return invalidArguments(tool.Name, err), nil
			}
			fallthrough
		default:
			in = defaults
			if len(args) > 0 && !jsonfast.DecodeStruct(args, &in) {
				in = defaults
				if err := json.Unmarshal(args, &in); err != nil {
					return invalidArguments(tool.Name, err), nil
				}
			}
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		// Switching on a pointer spares boxing a string result.
		switch v := any(&out).(type) {
		case **protocol.CallToolResult:
			return *v, nil
		case *string:
			if !req.stateless {
				return &textOnlyResult{text: *v}, nil
			}
			return textResult(req, *v), nil
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("encoding the result of tool %q: %w", tool.Name, err)
		}
		// "For backwards compatibility, a tool that returns structured
		// content SHOULD also return the serialized JSON in a TextContent
		// block."
		res := textResult(req, string(raw))
		if structured {
			res.StructuredContent = raw
		}
		return res, nil
	}
	e := &toolEntry{tool: tool, handler: handler, validator: validator}
	if exact {
		e.validator = nil // the handler validates, while it decodes
	}
	return e
}

// stringArgs reports whether the arguments of a tool with input In and
// validator v are exactly an object of In's fields, all strings (see
// [jsonschema.Validator.StringObject]): jsonfast.DecodeStringFields then
// validates them as it decodes, given the mask of the required ones.
func stringArgs(in reflect.Type, v *jsonschema.Validator) (required uint64, ok bool) {
	if v == nil {
		return 0, false
	}
	names, ok := jsonfast.StringFields(in)
	if !ok {
		return 0, false
	}
	props, ok := v.StringObject()
	if !ok || len(props) != len(names) {
		return 0, false
	}
	for i, name := range names {
		req, declared := props[name]
		if !declared {
			return 0, false
		}
		if req {
			required |= 1 << i
		}
	}
	return required, true
}

// mustTool panics on a tool that cannot be registered (see CheckTool).
func mustTool(t *protocol.Tool, nilHandler bool) {
	if err := CheckTool(t); err != nil {
		panic(err.Error())
	}
	mustHandler(nilHandler, fmt.Sprintf("tool %q", t.Name))
}

func invalidArguments(tool string, err error) *protocol.CallToolResult {
	return toolError(fmt.Errorf("invalid arguments for tool %q: %v", tool, err))
}

// textResult is a result of one text block, allocated at once and, for a
// stateless request, stamped as the server would (see [Server.stamp]) so
// that it need not be copied there.
func textResult(req *Request, text string) *protocol.CallToolResult {
	r := &struct {
		res     protocol.CallToolResult
		content [1]protocol.Content
	}{}
	r.content[0] = protocol.TextContent(text)
	r.res.Content = r.content[:]
	if req.stateless {
		r.res.ResultType = protocol.ResultComplete
		r.res.Meta = req.server.metaInfo
	}
	return &r.res
}

// isStructured reports whether a handler's output type is sent as
// structuredContent: structs and maps (objects), as the schema requires an
// object before 2026-07-28.
func isStructured(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[protocol.CallToolResult]() {
		return false
	}
	return t.Kind() == reflect.Struct || (t.Kind() == reflect.Map && t.Key().Kind() == reflect.String)
}

func inferSchema(t reflect.Type) (jsontext.Value, *jsonschema.Validator, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t == reflect.TypeFor[jsontext.Value]() {
		v, err := jsonschema.CompileJSON([]byte(`{"type":"object"}`), nil)
		return jsontext.Value(`{"type":"object"}`), v, err
	}
	schema, err := jsonschema.Infer(t, nil)
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, nil, err
	}
	v, err := jsonschema.Compile(schema, nil) // inferred schemas fit the built-in validator
	return raw, v, err
}

// compileSchema compiles a tool's input schema, with the server's schema
// engine when it has one.
func (s *Server) compileSchema(raw jsontext.Value) (*jsonschema.Validator, error) {
	if s.opts.SchemaEngine == nil {
		return jsonschema.CompileJSON(raw, nil)
	}
	return jsonschema.CompileJSON(raw, &jsonschema.CompileOptions{Engine: s.opts.SchemaEngine})
}

func (s *Server) putTool(e *toolEntry) {
	e.headers = toolHeaderParams(e)
	s.mu.Lock()
	s.tools.put(e.tool.Name, e)
	s.mu.Unlock()
	s.listChanged(protocol.NotificationToolsListChanged)
}

// toolHeaderParams are the arguments e's input schema mirrors into HTTP
// headers.
func toolHeaderParams(e *toolEntry) []mcpheader.Param {
	p, _ := mcpheader.Params(e.tool.InputSchema)
	return p
}

// RemoveTools removes tools by name.
func (s *Server) RemoveTools(names ...string) {
	s.mu.Lock()
	removed := s.tools.remove(names...)
	s.mu.Unlock()
	if removed {
		s.listChanged(protocol.NotificationToolsListChanged)
	}
}

func (s *Server) listTools(r *Request, params jsontext.Value) (any, error) {
	var p protocol.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	var entries []*toolEntry
	var next string
	var err error
	if sess := r.sessionWithTools(); sess != nil {
		entries, next, err = sess.toolPage(p.Cursor, s.opts.PageSize)
	} else {
		s.mu.RLock()
		entries, next, err = s.tools.page(p.Cursor, s.opts.PageSize)
		s.mu.RUnlock()
	}
	if err != nil {
		return nil, err
	}
	res := &protocol.ListToolsResult{Tools: make([]protocol.Tool, len(entries)), NextCursor: next}
	for i, e := range entries {
		res.Tools[i] = toolFor(&e.tool, r.ProtocolVersion)
	}
	return res, nil
}

// toolFor trims a tool to the members revision v defines.
func toolFor(t *protocol.Tool, v string) protocol.Tool {
	c := *t
	if !protocol.AtLeast(v, protocol.Version20250326) {
		c.Annotations = nil
	}
	if !protocol.AtLeast(v, protocol.Version20250618) {
		c.Title, c.OutputSchema = "", nil
	}
	if !protocol.AtLeast(v, protocol.Version20251125) {
		c.Icons, c.Execution = nil, nil
	}
	return c
}

// callToolParams is tools/call as the server decodes it: _meta was
// already picked out by the JSON-RPC decoder.
type callToolParams struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments,omitempty"`
	protocol.MRTRParams
	Task *protocol.TaskMetadata `json:"task,omitzero"`
}

// decodeCallToolParams decodes tools/call params without copying the
// arguments (they stay in the message's buffer, which nothing modifies)
// and without reflection in the common case.
func decodeCallToolParams(params jsontext.Value, p *callToolParams) error {
	c := jsonfast.NewCursor(params)
	err := c.Object(func(name []byte, escaped bool) error {
		if escaped {
			return errSlow
		}
		switch string(name) {
		case "name":
			s, err := c.String()
			p.Name = s
			return err
		case "arguments":
			v, err := c.Raw()
			if err == nil && string(v) != "null" {
				p.Arguments = v
			}
			return err
		case "_meta":
			return c.Skip() // picked out by the JSON-RPC decoder already
		default:
			return errSlow // inputResponses, requestState, task: rare
		}
	})
	if err == nil {
		return nil
	}
	*p = callToolParams{}
	return decodeParams(params, p)
}

var errSlow = errors.New("server: not for the fast path")

// callParams decodes a tools/call's params once, into the Request's
// allocation: the tool that runs is the one [Request.Name] told the
// middleware of, however the client spelled its name.
func (r *Request) callParams(params jsontext.Value) (*callToolParams, error) {
	p := &r.toolCall
	if r.toolCallDecoded {
		return p, r.toolCallErr
	}
	r.toolCallDecoded = true
	if sn := jsonrpc2.Meta(r.msg); !sn.Extra && len(sn.Name) > 0 && sn.Name[0] == '"' {
		// The decoder found the name and the arguments already.
		name, err := jsonrpc2.Unquote(sn.Name)
		if err != nil {
			r.toolCallErr = jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tool name: %v", err)
			return p, r.toolCallErr
		}
		p.Name = name
		if string(sn.Arguments) != "null" {
			p.Arguments = sn.Arguments
		}
	} else {
		r.toolCallErr = decodeCallToolParams(params, p)
	}
	return p, r.toolCallErr
}

// ToolCall returns a tools/call's params as the server decodes them to
// run the tool, decoded once for all who ask ([Request.Name] too): what a
// gateway forwards, without a second walk of the params, and without
// decoding or copying the arguments, which are raw JSON sharing the
// message's memory as [Request.Params] do. Meta is left out
// ([Request.Meta] has it). It fails with invalid params for params that
// do not decode, and for a request of another method.
func (r *Request) ToolCall() (protocol.CallToolParams, error) {
	if r.Method != protocol.MethodToolsCall {
		return protocol.CallToolParams{}, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "server: %s is not a tools/call", r.Method)
	}
	p, err := r.callParams(r.msg.Params)
	if err != nil {
		return protocol.CallToolParams{}, err
	}
	return protocol.CallToolParams{Name: p.Name, Arguments: p.Arguments, MRTRParams: p.MRTRParams, Task: p.Task}, nil
}

func (s *Server) callTool(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	p, err := r.callParams(params)
	if err != nil {
		return nil, err
	}
	e, ok := s.lookupTool(r, p.Name)
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool %q", p.Name)
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = jsontext.Value("{}")
	}
	// The promise of Options.LendToolArguments covers the whole call; the
	// transport acts on it once the reply is encoded.
	r.msg.Lent = s.opts.LendToolArguments
	if e.validator != nil {
		// The arguments come from a message the decoder checked strictly.
		if err := e.validator.ValidateTrusted(args); err != nil {
			// "Input validation errors" are tool execution errors, so the
			// model can read what was wrong and correct its call.
			return invalidArguments(p.Name, err), nil
		}
	}
	if r.stateless {
		if err := r.startMRTR(protocol.MethodToolsCall, p.Name, p.Arguments, &p.MRTRParams); err != nil {
			return nil, err
		}
	}
	if asTask, err := s.taskCall(r, e, p); err != nil || asTask {
		if err != nil {
			return nil, err
		}
		return s.startTask(ctx, r, e, args)
	}
	res, err := runMRTR(ctx, r, func() (any, error) { return e.handler(ctx, r, args) })
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return toolError(err), nil
	}
	if tr, ok := res.(*protocol.CallToolResult); ok {
		if tr == nil {
			return nil, fmt.Errorf("tool %q returned no result", p.Name)
		}
		if len(tr.StructuredContent) > 0 && !r.stateless && !protocol.AtLeast(r.ProtocolVersion, protocol.Version20250618) {
			c := *tr
			c.StructuredContent = nil
			res = &c
		}
	}
	return res, nil
}

// toolError is the result of a failed call: "Tool execution errors ...
// are reported in the result object with isError set to true".
func toolError(err error) *protocol.CallToolResult {
	return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(err.Error())}, IsError: true}
}

// toolHeaders returns the mirrored arguments of the registered tool
// called name, and whether there is such a tool
// (serverapi.Server.ToolHeaders).
func (s *Server) toolHeaders(name string) ([]mcpheader.Param, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.tools.get(name)
	if !ok {
		return nil, false
	}
	return e.headers, true
}
