package jsonrpc2

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
	holdOff atomic.Int32 // requests still to pass the turn at once
	tick    ticker       // counts holds
}

const (
	turnTick         = time.Millisecond
	holdOffAfterPass = 256
)

// holdTurn lets the caller of read, which is to run in, keep the reading
// turn. It reports false when the turn should be passed on instead.
func (s *scheduler) holdTurn(in *incoming) bool {
	g := &s.turn
	if g.holdOff.Load() > 0 {
		g.holdOff.Add(-1)
		return false
	}
	in.hasTurn = true
	g.tick.note()
	g.held.Store(true)
	return true
}

// turnTick is the timer's: it passes on a turn held since the previous
// tick (or any turn, once the connection is closed, so that the reader
// sees it), and stops ticking once no request held the turn for a tick.
func (s *scheduler) turnTick() {
	g := &s.turn
	seq, quiet := g.tick.quiet()
	closed := false
	select {
	case <-s.done:
		closed = true
	default:
	}
	if (quiet || closed) && g.held.CompareAndSwap(true, false) {
		if !closed {
			// Before the pass: the next reader must see it.
			g.holdOff.Store(holdOffAfterPass)
		}
		s.passReadTurn()
		quiet = false
	}
	if !quiet && !closed {
		g.tick.again()
		return
	}
	g.tick.stop(seq)
}

// ticker calls its function every turnTick while what it watches goes on:
// note counts an event and starts the ticks; at a tick, quiet tells
// whether an event came since the tick before, and stop ends the ticks.
// One timer, made by the first note, serves for the life of the
// connection: a timer reset per event would be simpler to reason about
// but not to run, as each reset wakes the runtime's network poller.
type ticker struct {
	fn    func()        // called at each tick; set by scheduler.init
	seq   atomic.Uint64 // events so far
	seen  atomic.Uint64 // seq at the previous tick
	armed atomic.Bool   // the timer is running
	timer atomic.Pointer[time.Timer]
}

// note counts an event and makes sure the timer ticks.
func (k *ticker) note() {
	k.seq.Add(1)
	if k.armed.Load() || !k.armed.CompareAndSwap(false, true) {
		return
	}
	t := k.timer.Load()
	if t == nil {
		// Made idle, so that it can only tick once it is stored.
		t = time.AfterFunc(time.Hour, k.fn)
		k.timer.Store(t)
	}
	t.Reset(turnTick)
}

// quiet is called at a tick: it reports whether no event came since the
// tick before, and the count to give stop.
func (k *ticker) quiet() (seq uint64, quiet bool) {
	seq = k.seq.Load()
	return seq, seq == k.seen.Swap(seq)
}

// again makes the timer tick once more.
func (k *ticker) again() { k.timer.Load().Reset(turnTick) }

// stop ends the ticks at the tick whose quiet returned seq. An event
// after that load may have found the timer still armed: the timer ticks
// again for that one.
func (k *ticker) stop(seq uint64) {
	k.armed.Store(false)
	if k.seq.Load() != seq && k.armed.CompareAndSwap(false, true) {
		k.again()
	}
}

// releaseTurn passes a held reading turn on. A late call (the turn was
// taken back and then held again for another request) merely passes the
// turn early.
func (s *scheduler) releaseTurn() {
	if s.turn.held.CompareAndSwap(true, false) {
		s.passReadTurn()
	}
}

// reclaimTurn is called when the handler of a request that held the
// reading turn returns: it reports whether the turn is still held, and
// then the caller is the reader again.
func (s *scheduler) reclaimTurn() bool {
	return s.turn.held.CompareAndSwap(true, false)
}
