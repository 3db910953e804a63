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
// result of the request that asked it, and a legacy server over HTTP sends
// it on that request's stream, but over stdio nothing says which request
// it is about. The link tells by elimination: the question goes to the
// one client in flight that can answer it. To keep that exact when several
// clients share one process, requests that may ask (from clients that can
// answer, of kinds not yet seen to complete without asking) go to that
// process one at a time.
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
	slot            bool // holds its link's slot
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

// sameClient reports whether two calls come from one legacy session.
func sameClient(a, b *call) bool { return a.req.Session != nil && a.req.Session == b.req.Session }

// begin registers c with the link. A call that may ask the client
// something over a shared legacy connection first waits for the link's
// slot.
func (l *link) begin(c *call, stateless bool) error {
	if l.sess == nil && !stateless && c.capable() {
		l.mu.Lock()
		asks, known := l.learned[c.kind]
		l.mu.Unlock()
		if !known || asks {
			select {
			case l.slot <- struct{}{}:
				c.slot = true
			case <-c.Done():
				return context.Cause(c.Context)
			}
		}
	}
	l.mu.Lock()
	l.calls[c] = struct{}{}
	l.mu.Unlock()
	return nil
}

// end unregisters c; completed says whether it got its answer, which
// teaches the link whether requests of its kind ask.
func (l *link) end(c *call, completed bool) {
	l.mu.Lock()
	delete(l.calls, c)
	if c.asked.Load() {
		l.learned[c.kind] = true
	} else if _, known := l.learned[c.kind]; completed && !known {
		l.learned[c.kind] = false
	}
	l.mu.Unlock()
	if c.slot {
		<-l.slot
	}
}

// ask routes a question of the server to the client it is for and
// returns the client's answer.
func (l *link) ask(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
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
	return c.ask(ctx, method, params)
}

// route finds the call a question is about.
func (l *link) route(ctx context.Context, method string) (*call, error) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		if !c.can(method) {
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "the client does not support %s", method)
		}
		return c, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The call that holds the slot is the one request in flight that may
	// ask: the others are of kinds seen to complete without asking (a
	// client's echo beside another client's sampling tool). It gets the
	// question.
	for c := range l.calls {
		if c.slot && c.can(method) {
			return c, nil
		}
	}
	var found *call
	clients, others := 0, 0
	for c := range l.calls {
		if !c.can(method) {
			others++
			continue
		}
		if found != nil && sameClient(found, c) {
			continue
		}
		found = c
		clients++
	}
	switch {
	case clients == 1:
		return found, nil
	case clients > 1:
		// Teach the link that these kinds ask, so that they are sent one
		// at a time from now on.
		for c := range l.calls {
			if c.can(method) {
				l.learned[c.kind] = true
			}
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
			"the gateway cannot tell which of %d clients this %s is for; requests of these kinds now go to the server one at a time (or set \"isolation\": \"session\")", clients, method)
	case others > 0:
		if len(l.calls) == 1 {
			// The one call in flight asked, though its client cannot
			// answer: its kind asks, and a capable client's call of it
			// must hold the slot (had it completed unmarked, the link
			// would learn that it does not ask).
			for c := range l.calls {
				c.asked.Store(true)
			}
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "the client does not support %s", method)
	}
	return nil, errNoRequest
}

// errNoRequest is a question of the server asked outside any request.
var errNoRequest = jsonrpc.NewError(jsonrpc.CodeInternalError, "asked outside a request: the gateway has no client to ask")

// ask puts a question to c's client in its era: a request on a legacy
// session, an input_required result for a stateless client.
func (c *call) ask(ctx context.Context, method string, params jsontext.Value) (jsontext.Value, error) {
	if c.pend != nil {
		return c.pend.ask(ctx, method, params)
	}
	key := fmt.Sprintf("q%d", c.seq.Add(1))
	return c.req.Ask(c.Context, key, method, params)
}

// questionPrefix names the keys of a method's questions.
func questionPrefix(method string) string {
	switch method {
	case protocol.MethodCreateMessage:
		return "sample-"
	case protocol.MethodElicit:
		return "elicit-"
	case protocol.MethodListRoots:
		return "roots-"
	}
	return "q-"
}
