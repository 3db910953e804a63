package jsonrpc

import (
	"sync/atomic"
	"time"
)

// A request that can start at once is run by the goroutine that read it,
// which keeps the reading turn while the handler runs: most handlers are
// quick, and the goroutine then reads the next message itself, as a
// sequential server would, with no goroutine switch per request.
//
// turnGuard keeps a handler that is not quick (it computes for long, or
// waits on something) from holding up the messages behind it. A timer
// ticks every turnTick while requests are being held; a tick that finds
// the same request holding the turn as the tick before passes the turn on
// to another goroutine, so a hold lasts at most about two ticks. A timer
// reset per request would be cheaper to reason about but not to run: each
// reset wakes the runtime's network poller. After such a pass the next
// holdOffAfterPass requests hand the turn on at once, so that a burst of
// slow calls starts together rather than one per tick. A handler that
// makes an outgoing call passes the turn at once (its answer must be read).
type turnGuard struct {
	held    atomic.Bool
	seq     atomic.Uint64              // holds begun
	armed   atomic.Bool                // the timer is running
	holdOff atomic.Int32               // requests still to pass the turn at once
	timer   atomic.Pointer[time.Timer] // made by the first hold
	seen    atomic.Uint64              // seq at the previous tick
}

const (
	turnTick         = time.Millisecond
	holdOffAfterPass = 256
)

// holdTurn lets the caller of read, which is to run in, keep the reading
// turn. It reports false when the turn should be passed on instead.
func (c *Conn) holdTurn(in *incoming) bool {
	g := &c.turn
	if g.holdOff.Load() > 0 {
		g.holdOff.Add(-1)
		return false
	}
	in.hasTurn = true
	g.seq.Add(1)
	g.held.Store(true)
	c.armTurnTimer()
	return true
}

func (c *Conn) armTurnTimer() {
	g := &c.turn
	if g.armed.Load() || !g.armed.CompareAndSwap(false, true) {
		return
	}
	t := g.timer.Load()
	if t == nil {
		// Made idle, so that it can only tick once it is stored.
		t = time.AfterFunc(time.Hour, c.turnTick)
		g.timer.Store(t)
	}
	t.Reset(turnTick)
}

// turnTick is the timer's: it passes on a turn held since the previous
// tick (or any turn, once the connection is closed, so that the reader
// sees it), and stops ticking once no request held the turn for a tick.
func (c *Conn) turnTick() {
	g := &c.turn
	seq := g.seq.Load()
	quiet := seq == g.seen.Swap(seq)
	closed := false
	select {
	case <-c.done:
		closed = true
	default:
	}
	if (quiet || closed) && g.held.CompareAndSwap(true, false) {
		if !closed {
			// Before the pass: the next reader must see it.
			g.holdOff.Store(holdOffAfterPass)
		}
		c.passReadTurn()
		quiet = false
	}
	if !quiet && !closed {
		g.timer.Load().Reset(turnTick)
		return
	}
	g.armed.Store(false)
	// A hold that began after the load of seq may have found the timer
	// still armed: it is armed again for that one.
	if g.seq.Load() != seq && g.armed.CompareAndSwap(false, true) {
		g.timer.Load().Reset(turnTick)
	}
}

// releaseTurn passes a held reading turn on. A late call (the turn was
// taken back and then held again for another request) merely passes the
// turn early.
func (c *Conn) releaseTurn() {
	if c.turn.held.CompareAndSwap(true, false) {
		c.passReadTurn()
	}
}

// reclaimTurn is called when the handler of a request that held the
// reading turn returns: it reports whether the turn is still held, and
// then the caller is the reader again.
func (c *Conn) reclaimTurn() bool {
	return c.turn.held.CompareAndSwap(true, false)
}
