package jsonrpc2

import (
	"context"
	"sync"
	"time"
)

// incoming is a request received: its context, its answer, and the
// MaxInFlight slot its handler holds.
type incoming struct {
	id              ID
	m               *Message
	ctx             context.Context
	rc              reqCtx
	cancel          context.CancelCauseFunc
	cancelledByPeer bool
	conn            *Conn

	// The handler's MaxInFlight slot: given back while the handler waits
	// on outgoing calls made with its context, taken back when the last
	// of them returns, and released when the handler returns.
	slot     sync.Mutex
	calls    int  // outgoing calls in progress with the handler's context
	held     bool // the handler holds a slot
	finished bool // the handler returned
	hasTurn  bool // run by the reader, which kept the reading turn

	reply Message // the answer, in the request's allocation rather than one of its own
}

// startCall is called when the handler makes an outgoing call: the first
// one gives back its slot, so that the answer can be read even when every
// slot is taken.
func (in *incoming) startCall() {
	in.slot.Lock()
	defer in.slot.Unlock()
	in.calls++
	if in.hasTurn {
		// The answer it waits for must be read.
		in.conn.sched.releaseTurn()
	}
	if in.held {
		in.held = false
		in.conn.release()
	}
}

// endCall is called when an outgoing call of the handler returns: when no
// other is in progress, the handler (if it is still running) waits for a
// slot again before it goes on.
func (in *incoming) endCall() {
	in.slot.Lock()
	defer in.slot.Unlock()
	in.calls--
	if in.calls > 0 || in.held || in.finished {
		return
	}
	select {
	case in.conn.sem <- struct{}{}:
		in.held = true
	case <-in.conn.done:
	}
}

// finish releases the handler's slot when it returns.
func (in *incoming) finish() {
	in.slot.Lock()
	held := in.held
	in.held, in.finished = false, true
	in.slot.Unlock()
	if held {
		in.conn.release()
	}
}

type incomingKey struct{}

// reqCtx is a request's context: it carries the request itself (for
// RequestID and for a handler's own calls) without a context.WithValue.
type reqCtx struct {
	context.Context
	in *incoming
}

func (r *reqCtx) Value(key any) any {
	if _, ok := key.(incomingKey); ok {
		return r.in
	}
	return r.Context.Value(key)
}

// notificationKey marks the context of a notification handler.
type notificationKey struct{}

// drain waits for in-flight handlers after the input ended.
func (c *Conn) drain() {
	finished := make(chan struct{})
	go func() {
		// Requests still in the notification queue start first: only
		// then is the set of handlers to wait for complete.
		for c.notesPending.Load() > 0 {
			select {
			case <-time.After(time.Millisecond):
			case <-c.done:
				return
			}
		}
		c.handlers.Wait()
		close(finished)
	}()
	t := time.NewTimer(c.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
	case <-c.done:
	}
}
