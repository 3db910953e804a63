package gateway

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// A call is one client request being served through a link: what the
// routing of the server's questions (sampling, elicitation, roots) needs
// to know about it.
//
// A server's question names no request. A stateless server's comes in the
// result of the request that asked it, and a legacy server over HTTP may
// send it on that request's stream, but over stdio nothing says which
// request it is about: the link's gate (gate.go) admits calls so that a
// question can be put to the one client with calls in flight, and refuses
// it when there are more.
//
// A call is also the context of its upstream request, the client
// request's own (the embedded Context) marked as serving the call: a
// stateless server's questions, which the client answers with the
// context of the request that got them, find their request by it. (One
// allocation a call, where context.WithValue would add a second.)
type call struct {
	context.Context // the client request's
	req             *server.Request
	kind            kind     // what is learned is keyed by it
	pend            *pending // for a stateless client: where its questions go
	asked           atomic.Bool
	seq             atomic.Int32
	// Guarded by the link's mutex:
	gated  bool // admitted by the link's gate
	owns   bool // may ask: other clients' calls wait while it runs
	parked bool // its question waits for its client
}

// kind is the method and subject of a call (a tool's name, a prompt's):
// whether requests of a kind ask their client something is learned.
type kind struct{ method, name string }

type callKey struct{}

// Value makes a call's context say that it serves the call.
func (c *call) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// can reports whether c's client declared the capability method needs.
func (c *call) can(method string) bool {
	caps := &c.req.ClientCapabilities
	switch method {
	case protocol.MethodCreateMessage:
		return caps.Sampling != nil
	case protocol.MethodElicit:
		return caps.Elicitation != nil
	case protocol.MethodListRoots:
		return caps.Roots != nil
	}
	return false
}

// capable reports whether c's client can be asked anything.
func (c *call) capable() bool {
	caps := &c.req.ClientCapabilities
	return caps.Sampling != nil || caps.Elicitation != nil || caps.Roots != nil
}

// begin registers c with the link. On a connection shared by clients
// whose server's questions name no request (a legacy server's, with a
// link not kept for one session), the gate admits it (see gate).
func (l *link) begin(c *call, stateless bool) error {
	l.mu.Lock()
	c.gated = l.sess == nil && !stateless
	c.owns = c.gated && c.capable() && l.gate.mayAsk(c.kind)
	if !c.gated {
		l.gate.enter(c)
		l.mu.Unlock()
		return nil
	}
	l.mu.Unlock()
	return l.admit(c)
}

// end unregisters c; completed says whether it got its answer, which
// teaches the link whether requests of its kind ask.
func (l *link) end(c *call, completed bool) {
	l.mu.Lock()
	l.gate.leave(c, completed)
	l.mu.Unlock()
}

// ask routes a question of the server to the client it is for and
// returns the client's answer.
func (l *link) ask(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
	if err := taskQuestion(ctx, params); err != nil {
		return nil, err
	}
	c, err := l.route(ctx, method)
	if err == errNoRequest && method == protocol.MethodListRoots {
		// Roots are each client's own; a server that asks for them on
		// its own (server-filesystem and server-everything do, once
		// initialized) is told of none rather than of an error.
		return jsontext.Value(`{"roots":[]}`), nil
	}
	if err != nil {
		l.up.g.log.Warn("gateway: a question of the server could not be routed", "server", l.up.name, "method", method, "error", err)
		return nil, err
	}
	c.asked.Store(true)
	if !c.gated {
		return c.ask(ctx, method, params)
	}
	l.park(c)
	answer, err := c.ask(ctx, method, params)
	if uerr := l.unpark(c); err == nil {
		err = uerr
	}
	return answer, err
}

// route finds the call a question is about: the one its context names,
// else the one its gate attributes it to.
func (l *link) route(ctx context.Context, method string) (*call, error) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		if !c.can(method) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "the client does not support %s", method)
		}
		return c, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gate.route(method)
}

// ask puts a question to c's client in its era: a request on a legacy
// session, an input_required result for a stateless client.
func (c *call) ask(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
	if c.pend != nil {
		return c.pend.ask(ctx, method, params)
	}
	key := fmt.Sprintf("q%d", c.seq.Add(1))
	return c.req.Ask(c.Context, key, method, params)
}
