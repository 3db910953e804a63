package client

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// A Sender sends one request to the server and returns its answer: the
// response message, and for an error answer its *[jsonrpc.Error] as the
// error too. params is a value that encodes to the request's params
// (json.Marshal it to read them; it is nil when there are none).
type Sender func(ctx context.Context, method string, params any) (*jsonrpc.Message, error)

// Middleware wraps the requests a client sends, as net/http's middleware
// wraps an http.RoundTripper or a Handler: it sees every request (the
// handshake's server/discover or initialize included, and each round of
// a multi round-trip request), with its method and params, and may
// answer it itself or call next, with a context of its own. It runs on
// the caller's goroutine.
//
// A client without middleware pays nothing for it.
type Middleware func(next Sender) Sender

// callOptionsKey carries a request's options past the middleware to the
// connection (with middleware only).
type callOptionsKey struct{}

// buildChain composes the middleware of the options around the
// connection.
func (c *Client) buildChain() {
	if len(c.opts.Middleware) == 0 {
		return
	}
	h := Sender(func(ctx context.Context, method string, params any) (*jsonrpc.Message, error) {
		o, _ := ctx.Value(callOptionsKey{}).(*jsonrpcapi.CallOptions)
		return c.deliver(ctx, method, params, o)
	})
	for i := len(c.opts.Middleware) - 1; i >= 0; i-- {
		h = c.opts.Middleware[i](h)
	}
	c.chain = h
}

// request sends one request through the middleware.
func (c *Client) request(ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*jsonrpc.Message, error) {
	if c.chain == nil {
		return c.deliver(ctx, method, params, o)
	}
	if o != nil {
		ctx = context.WithValue(ctx, callOptionsKey{}, o)
	}
	return c.chain(ctx, method, params)
}

// deliver sends one request over the connection.
func (c *Client) deliver(ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*jsonrpc.Message, error) {
	if o == nil {
		return c.conn.Call(ctx, method, params)
	}
	return rpc.Call(c.conn, ctx, method, params, o)
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
