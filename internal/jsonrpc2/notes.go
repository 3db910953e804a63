package jsonrpc2

import (
	"context"
	"runtime/debug"
)

// Notifications are handled one at a time, in the order they arrived, on
// a goroutine that runs while some are queued; responses and requests
// that arrive behind them wait in the same queue (see Conn.dispatch).

// enqueueNote queues a message for the notification goroutine, and
// starts one when none runs.
func (c *Conn) enqueueNote(m *Message) bool {
	c.notesPending.Add(1)
	select {
	case c.notes <- m:
	case <-c.done:
		return false
	}
	c.runNotes()
	return true
}

// runNotes starts the goroutine that handles the queued notes, unless one
// runs. It counts among the handlers, which Wait waits for.
func (c *Conn) runNotes() {
	if !c.notesRunning.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		c.notesRunning.Store(false)
		return
	}
	c.handlers.Add(1)
	c.mu.Unlock()
	go c.handleNotes()
}

// handleNotes handles notifications one at a time, in order, until none
// is queued.
func (c *Conn) handleNotes() {
	defer c.handlers.Done()
	for {
		select {
		case m := <-c.notes:
			switch {
			case m.IsResponse():
				c.deliver(m)
			case m.IsRequest():
				c.request(m, false)
			default:
				c.notification(c.noteCtx, m)
			}
			c.notesPending.Add(-1)
			continue
		case <-c.done:
		default:
		}
		c.notesRunning.Store(false)
		// A note queued after the queue was found empty, while this
		// goroutine still counted as running, started none: take it.
		if len(c.notes) == 0 || c.isClosed() || !c.notesRunning.CompareAndSwap(false, true) {
			return
		}
	}
}

// isClosed reports whether the connection is closed.
func (c *Conn) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *Conn) notification(ctx context.Context, m *Message) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("jsonrpc: notification handler panicked", "method", m.Method, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.handler.Handle(ctx, m)
}
