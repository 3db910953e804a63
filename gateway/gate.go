package gateway

import (
	"context"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A gate admits the calls of a link whose server's questions name no
// request (a legacy server's, asked over a connection the gateway shares:
// over stdio nothing says which request a question is about), so that
// each question can be told to be one client's.
//
// The rule that makes a question attributable: it goes to a client only
// when that client is the only one with requests in flight on the link;
// when requests of more than one client are in flight it is refused (the
// server gets an error), never guessed. To keep that from refusing the
// questions that were meant, a call that may ask (a capable client's call
// of a kind not seen to complete without asking: an owner) is admitted
// only once no other client has a request in flight there, and other
// clients' calls wait while it runs. Calls of kinds seen to complete
// without asking, and calls of clients that cannot answer, run side by
// side when no owner runs.
//
// While an owner's question waits for its client's answer (a person may
// take minutes to answer, a stateless client as long as the pending
// request lives), it is parked: other clients' calls that do not own are
// admitted, and owners wait for it at most parkedWait, then fail with an
// error that says why. Once the answer comes, the parked call waits for
// the calls admitted meanwhile to end before the server gets the answer,
// so that the server's next question is attributable again.
//
// A client is a legacy session, or a single stateless request (a
// stateless client has nothing that ties two of its requests together
// but a credential several clients may share).
type gate struct {
	calls   map[*call]struct{} // admitted and not ended
	waiting map[*call]struct{} // owners waiting to be admitted
	owning  int                // owners among calls
	changed chan struct{}      // made by a waiter; closed when the gate changes
	learned map[kind]bool      // whether requests of a kind asked the client something
}

// parkedWait bounds how long a call that may ask waits for another
// client's call whose question waits for its client.
const parkedWait = 10 * time.Second

// sameClient reports whether two calls come from one client: one legacy
// session, or one (stateless) request.
func sameClient(a, b *call) bool {
	return a == b || (a.req.Session != nil && a.req.Session == b.req.Session)
}

// mayAsk reports whether calls of k may ask: not seen to complete without
// asking. The caller holds the link's lock.
func (g *gate) mayAsk(k kind) bool {
	asks, known := g.learned[k]
	return asks || !known
}

// learn records whether a call of k asked its client something.
func (g *gate) learn(k kind, asks bool) {
	if g.learned == nil {
		g.learned = map[kind]bool{}
	}
	g.learned[k] = asks
}

// enter registers c as in flight.
func (g *gate) enter(c *call) {
	if g.calls == nil {
		g.calls = map[*call]struct{}{}
	}
	g.calls[c] = struct{}{}
	if c.owns {
		g.owning++
	}
}

// leave unregisters c, and teaches the gate whether its kind asks
// (completed: it got its answer).
func (g *gate) leave(c *call, completed bool) {
	delete(g.calls, c)
	if c.owns {
		g.owning--
	}
	if c.asked.Load() {
		g.learn(c.kind, true)
	} else if _, known := g.learned[c.kind]; completed && !known {
		g.learn(c.kind, false)
	}
	g.signal()
}

// signal wakes the goroutines waiting for the gate to change (none, and
// nothing to do, when there is no channel).
func (g *gate) signal() {
	if g.changed != nil {
		close(g.changed)
		g.changed = nil
	}
}

// wakeup returns the channel closed at the gate's next change.
func (g *gate) wakeup() <-chan struct{} {
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

// parkedOwner returns an owner of another client than c's whose question
// waits for its client, or nil.
func (g *gate) parkedOwner(c *call) *call {
	for o := range g.calls {
		if o.owns && o.parked && !sameClient(o, c) {
			return o
		}
	}
	return nil
}

// blocked reports whether c must wait, and whether what it waits for
// includes another client's parked question.
func (g *gate) blocked(c *call) (wait, parked bool) {
	if c.owns {
		for o := range g.calls {
			if !sameClient(o, c) {
				return true, g.parkedOwner(c) != nil
			}
		}
		return false, false
	}
	if g.owning == 0 && len(g.waiting) == 0 {
		return false, false
	}
	for o := range g.calls {
		if o.owns && !o.parked && !sameClient(o, c) {
			return true, false
		}
	}
	// An owner waiting only for calls in flight to end goes first, lest a
	// stream of other calls keep it out.
	for w := range g.waiting {
		if !sameClient(w, c) && g.parkedOwner(w) == nil {
			return true, false
		}
	}
	return false, false
}

// errParked is the error of a call that waited too long for another
// client's answer.
func errParked(server string) error {
	return jsonrpc.NewError(jsonrpc.CodeInternalError,
		"upstream %q waits for another client's answer to its question, and a request that may ask one cannot be told apart from it: try again later (or set \"isolation\": \"session\")", server)
}

// admit waits until c may go to the server and registers it. lock is the
// link's mutex, which guards the gate.
func (l *link) admit(c *call) error {
	g := &l.gate
	var bound <-chan time.Time
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		wait, parked := g.blocked(c)
		if !wait {
			delete(g.waiting, c)
			g.enter(c)
			return nil
		}
		switch {
		case !parked:
			bound = nil
		case bound == nil:
			bound = time.After(parkedWait)
		}
		if c.owns {
			if g.waiting == nil {
				g.waiting = map[*call]struct{}{}
			}
			g.waiting[c] = struct{}{}
		}
		if err := l.sleep(c, bound); err != nil {
			delete(g.waiting, c)
			g.signal()
			return err
		}
	}
}

// sleep waits, with the link's lock released, for the gate to change, c
// to be cancelled, or bound; its error says which ended the wait.
func (l *link) sleep(c *call, bound <-chan time.Time) error {
	wake := l.gate.wakeup()
	l.mu.Unlock()
	var err error
	select {
	case <-wake:
	case <-c.Done():
		err = context.Cause(c.Context)
	case <-bound:
		err = errParked(l.up.name)
	}
	l.mu.Lock()
	return err
}

// park marks c's question as waiting for its client; unpark ends that,
// and waits until no other client's call is in flight (those admitted
// meanwhile), so that the server's next question is attributable.
func (l *link) park(c *call) {
	l.mu.Lock()
	c.parked = true
	l.gate.signal()
	l.mu.Unlock()
}

func (l *link) unpark(c *call) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.parked = false
	for l.gate.others(c) {
		if err := l.sleep(c, nil); err != nil {
			return err
		}
	}
	return nil
}

// others reports whether a call of another client than c's is in flight.
func (g *gate) others(c *call) bool {
	for o := range g.calls {
		if !sameClient(o, c) {
			return true
		}
	}
	return false
}

// route finds the call a question is about: the one client with calls in
// flight, if it can answer. The caller holds the link's lock.
func (g *gate) route(method string) (*call, error) {
	var found *call
	for c := range g.calls {
		switch {
		case found == nil:
			found = c
		case !sameClient(found, c):
			// Teach the gate that these kinds ask, so that their calls own
			// it from now on.
			for c := range g.calls {
				g.learn(c.kind, true)
			}
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError,
				"the gateway cannot tell which of the clients with requests in flight this %s is for, so it is refused; requests of these kinds now go to the server one client at a time (or set \"isolation\": \"session\")", method)
		case c.owns && !found.owns:
			found = c // the likelier asker: the question goes on its stream
		}
	}
	if found == nil {
		return nil, errNoRequest
	}
	if !found.can(method) {
		// Its kind asks, though its client cannot answer: a capable
		// client's call of it must own the gate.
		found.asked.Store(true)
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "the client does not support %s", method)
	}
	if !found.owns && found.gated {
		// It asks after all: it owns the gate for the rest of its life
		// (its client is the only one in flight, so nothing else owns it).
		found.owns = true
		g.owning++
	}
	return found, nil
}

// errNoRequest is a question of the server asked outside any request.
var errNoRequest = jsonrpc.NewError(jsonrpc.CodeInternalError, "asked outside a request: the gateway has no client to ask")

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
