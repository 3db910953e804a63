package client

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// buildChains composes the middleware of the options around what they
// wrap; a chain without middleware stays nil, and costs nothing.
func (c *Client) buildChains() {
	if mw := c.opts.Sending; len(mw) > 0 {
		c.sending = intercept.Chain(c.sendIntercepted, mw...)
	}
	if mw := c.opts.Receiving; len(mw) > 0 {
		c.receiving = intercept.Chain(c.answerIntercepted, mw...)
	}
}

// sent is a request the client sends, as the source of the
// intercept.Request its sending middleware sees (in one allocation).
type sent struct {
	ir   intercept.Request
	opts *jsonrpcapi.CallOptions // the call's bounds, for the connection
	msg  *jsonrpc.Message        // the answer, once the connection has it
}

// request sends one request through the sending middleware.
func (c *Client) request(ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*jsonrpc.Message, error) {
	if c.sending == nil {
		return c.deliver(ctx, method, params, o)
	}
	s := &sent{opts: o}
	s.ir = intercept.Request{Method: method, ProtocolVersion: c.version, Stateless: c.stateless, Params: params}
	s.ir.Source = s
	res, err := c.sending(ctx, &s.ir)
	if err != nil {
		return nil, err
	}
	return s.message(res.Value)
}

// message is the answer whose result is v: the connection's own message
// when v is its result untouched (what the decoder found in it stays
// known), else a message made for v.
func (s *sent) message(v any) (*jsonrpc.Message, error) {
	raw, isRaw := v.(jsontext.Value)
	if isRaw && s.msg != nil && sameBytes(raw, s.msg.Result) {
		return s.msg, nil
	}
	if !isRaw {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("client: encoding the result middleware gave for %s: %w", s.ir.Method, err)
		}
	}
	return &jsonrpc.Message{Result: raw}, nil
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sendIntercepted is the innermost handler of the sending middleware: it
// sends req as middleware left it.
func (c *Client) sendIntercepted(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
	s, _ := req.Source.(*sent) // nil for a request middleware made
	var o *jsonrpcapi.CallOptions
	if s != nil {
		o = s.opts
	}
	params, err := c.paramsWithAdded(req.Method, req.Params, req.Meta)
	if err != nil {
		return intercept.Result{}, err
	}
	m, err := c.deliver(ctx, req.Method, params, o)
	if err != nil {
		return intercept.Result{}, err
	}
	if s != nil {
		s.msg = m
	}
	res := intercept.Result{Value: jsontext.Value(m.Result)}
	if req.Method == protocol.MethodToolsCall {
		res.IsError = isToolError(m)
	}
	return res, nil
}

// paramsWithAdded returns params with the members sending middleware
// added to the request's _meta (intercept.Request.Meta) merged in, or
// params as they are when it added none. Neither params nor the caller's
// _meta map is written to: the request is built anew around them.
func (c *Client) paramsWithAdded(method string, params any, added protocol.Meta) (any, error) {
	if len(added) == 0 {
		return params, nil
	}
	switch p := params.(type) {
	case *callToolWire:
		w := *p
		w.Meta = p.Meta.plus(c, added)
		return &w, nil
	case *metaParams:
		w := *p
		w.Meta = p.Meta.plus(c, added)
		return &w, nil
	case nil:
		return &metaParams{Meta: wireMeta{c: c, user: added}}, nil
	}
	return c.objectWithAdded(method, params, added)
}

// objectWithAdded is paramsWithAdded for params of any other kind (those
// of initialize, or a value middleware gave): they are taken apart as a
// JSON object, any _meta of their own merged with added.
func (c *Client) objectWithAdded(method string, params any, added protocol.Meta) (any, error) {
	raw, ok := params.(jsontext.Value)
	if !ok {
		var err error
		if raw, err = json.Marshal(params); err != nil {
			return nil, fmt.Errorf("client: encoding the params of %s: %w", method, err)
		}
	}
	rest, own, err := splitMeta(raw)
	if err != nil {
		return nil, fmt.Errorf("client: adding to the _meta of %s: %w", method, err)
	}
	return &metaParams{Meta: wireMeta{user: own}.plus(c, added), Rest: rest}, nil
}

// splitMeta takes the _meta member out of the params object raw: rest is
// the other members (nil for none), own the _meta's. raw without a _meta
// is returned as it is, undecoded.
func splitMeta(raw jsontext.Value) (rest jsontext.Value, own protocol.Meta, err error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return nil, nil, fmt.Errorf("params are not an object: %.40s", raw)
	}
	if !bytes.Contains(raw, []byte(`"_meta"`)) {
		if len(raw) <= 2 {
			return nil, nil, nil
		}
		return raw, nil, nil
	}
	var obj map[string]jsontext.Value
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, nil, fmt.Errorf("params are not an object: %w", err)
	}
	if m, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(m, &own); err != nil {
			return nil, nil, fmt.Errorf("params' _meta: %w", err)
		}
		delete(obj, "_meta")
	}
	if len(obj) > 0 {
		if rest, err = json.Marshal(obj); err != nil {
			return nil, nil, err
		}
	}
	return rest, own, nil
}

// isToolError reports whether m's result, a tools/call's, is a tool
// error: as the decoder found it on its way through the result, so that
// a 64 KiB result is not walked again; else (an answer not decoded here)
// by a walk of its members.
func isToolError(m *jsonrpc.Message) bool {
	if sn := jsonrpc2.Meta(m); sn.ResultSeen {
		return string(sn.IsError) == "true"
	}
	v, ok, _ := jsonrpc2.Member(m.Result, "isError")
	return ok && string(v) == "true"
}

// What middleware asks of a request the client sends, read from its
// params when asked.
func (s *sent) Name() string {
	switch p := s.ir.Params.(type) {
	case *callToolWire:
		return p.Name
	case *metaParams:
		return rawMember(p.Rest, nameMember(s.ir.Method))
	case jsontext.Value:
		return rawMember(p, nameMember(s.ir.Method))
	}
	return ""
}

func (s *sent) Arguments() jsontext.Value {
	p, ok := s.ir.Params.(*callToolWire)
	if !ok || p.Arguments == nil {
		return nil
	}
	switch a := p.Arguments.(type) {
	case jsontext.Value:
		return a
	case stableArgs:
		return jsontext.Value(a)
	}
	raw, err := json.Marshal(p.Arguments)
	if err != nil {
		return nil
	}
	return raw
}

func (s *sent) ProgressToken() jsontext.Value {
	var meta wireMeta
	switch p := s.ir.Params.(type) {
	case *callToolWire:
		meta = p.Meta
	case *metaParams:
		meta = p.Meta
	}
	if meta.token == 0 {
		return nil
	}
	return jsontext.Value(fmt.Sprint(meta.token))
}

func (s *sent) Caller() *intercept.Caller { return nil }

// nameMember is the params member that names what a method is about.
func nameMember(method string) string {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		return "name"
	case protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe:
		return "uri"
	}
	return ""
}

// rawMember returns the string member name of the object raw, "" when
// there is none.
func rawMember(raw jsontext.Value, name string) string {
	if name == "" {
		return ""
	}
	v, ok, err := jsonrpc2.Member(raw, name)
	if err != nil || !ok {
		return ""
	}
	s, err := jsonrpc2.Unquote(v)
	if err != nil {
		return ""
	}
	return s
}

// deliver sends one request over the connection.
func (c *Client) deliver(ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*jsonrpc.Message, error) {
	if o == nil {
		return c.conn.Call(ctx, method, params)
	}
	return jsonrpc2.Call(c.conn, ctx, method, params, o)
}

// answerRequest answers a request of the server, through the receiving
// middleware: a legacy server-to-client request (id is its id) or a
// stateless server's input request (id is not valid).
func (c *Client) answerRequest(ctx context.Context, id jsonrpc.ID, method string, params jsontext.Value) (any, error) {
	if c.receiving == nil {
		return c.answer(ctx, method, params)
	}
	req := &intercept.Request{Method: method, ID: id, ProtocolVersion: c.version, Stateless: c.stateless}
	if params != nil {
		req.Params = params
	}
	res, err := c.receiving(ctx, req)
	return res.Value, err
}

// answerIntercepted is the innermost handler of the receiving
// middleware: it answers req, with the params middleware left, with the
// client's callbacks.
func (c *Client) answerIntercepted(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
	var params jsontext.Value
	switch p := req.Params.(type) {
	case nil:
	case jsontext.Value:
		params = p
	default:
		raw, err := json.Marshal(p)
		if err != nil {
			return intercept.Result{}, fmt.Errorf("client: encoding the params middleware gave for %s: %w", req.Method, err)
		}
		params = raw
	}
	v, err := c.answer(ctx, req.Method, params)
	return intercept.Result{Value: v}, err
}

// callResult is request followed by decoding the result into out.
func (c *Client) callResult(ctx context.Context, method string, params, out any) error {
	m, err := c.request(ctx, method, params, nil)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", method, err)
	}
	return nil
}

// CallMethod sends a request of a method MCP does not define (a custom
// method, which a ferry server serves with server.Server.HandleMethod)
// and decodes its result into result, unless result is nil. params is
// nil or any value that encodes to a JSON object. To a stateless server,
// the request carries the _meta every request of the era carries, as the
// client's other requests do; the client's timeouts and middleware apply.
func (c *Client) CallMethod(ctx context.Context, method string, params, result any) error {
	var raw any // nil, or the params as a JSON object
	if params != nil {
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("client: encoding the params of %s: %w", method, err)
		}
		if len(b) == 0 || b[0] != '{' {
			return fmt.Errorf("client: the params of %s must be a JSON object, not %s", method, b)
		}
		raw = jsontext.Value(b)
	}
	m, err := c.call(ctx, method, nil, func(meta wireMeta) any { return c.paramsWith(meta, raw) })
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, result); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", method, err)
	}
	return nil
}
