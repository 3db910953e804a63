package jsonrpc2

import (
	"context"
	"sync/atomic"
)

// With [ConnOptions].CallerReads, a call reads its own answer when nobody
// else is reading. The reading turn then has a third place to be, besides
// a worker reading and a worker running a request it read: parked, for the
// next call to take. A worker that delivers an answer parks the turn when
// no other call waits for one; a call that has written its request takes
// a parked turn, reads until its answer has come, and parks the turn
// again, or passes it to a worker when other calls wait. A client that
// waits for each answer before its next call thus reads every answer on
// the goroutine that waits for it: no goroutine switch per call, and no
// second thread woken to run the caller (which, with an idle P, the
// runtime does for every goroutine made runnable).
//
// Nobody reads while the turn is parked: a timer that ticks every
// turnTick while the turn is being parked gives a turn left parked for a
// whole tick to a worker, which reads on. What the peer sends between
// calls therefore waits a tick or two at most, and a connection that is
// idle has its worker reading, as it would without CallerReads.
//
// A call that reads cannot watch its context or its deadline: when either
// ends, the read is interrupted ([ReadInterrupter]), and the call passes
// the turn on and ends as any call does.
//
// Calls that overlap (Conn.overlap: the last call began while another
// waited for its answer) are read for by a worker that keeps the turn,
// as without CallerReads, since passing the turn between them would cost
// a goroutine switch each time rather than save one.
type parkedTurn struct {
	parked atomic.Bool
	tick   ticker // counts parks
	// reading is the id of the call reading, if one is (0 otherwise):
	// its deadline interrupts the read.
	reading atomic.Int64
}

// turnParked is what read returns when it parked the turn.
var turnParked = new(incoming)

// takeParked takes the parked turn, if it is.
func (s *scheduler) takeParked() bool {
	return s.park.parked.Load() && s.park.parked.CompareAndSwap(true, false)
}

// unpark gives a parked turn to a worker.
func (s *scheduler) unpark() {
	if s.park.parked.CompareAndSwap(true, false) {
		s.passReadTurn()
	}
}

// parkIfIdle parks the turn of the reading worker when no call waits for
// an answer and calls do not overlap, and reports whether it did; when it
// did not, the worker still holds the turn.
func (s *scheduler) parkIfIdle() bool {
	waiting, overlap, _ := s.p.callsWaiting()
	return !waiting && !overlap && s.parkTurn()
}

// parkTurn parks the turn its caller holds, unless the turn is needed at
// once: a call may have started waiting after its caller last looked, or
// the connection closed. It reports whether it parked the turn; when it
// did not, the caller still holds it.
func (s *scheduler) parkTurn() bool {
	g := &s.park
	g.tick.note()
	g.parked.Store(true)
	waiting, _, closed := s.p.callsWaiting()
	needed := waiting || closed
	// A call that wrote its request before the turn was parked waits on
	// its channel rather than reading; a call that took the turn since
	// reads its answer itself.
	return !needed || !g.parked.CompareAndSwap(true, false)
}

// leaveTurn parks the turn its caller holds, or passes it to a worker
// when it is needed.
func (s *scheduler) leaveTurn() {
	if !s.parkTurn() {
		s.passReadTurn()
	}
}

// parkTick is the park timer's: a turn that was not parked again since the
// previous tick, and is still parked, goes to a worker; the timer stops
// once a tick passes with no park.
func (s *scheduler) parkTick() {
	g := &s.park
	seq, quiet := g.tick.quiet()
	if !quiet {
		g.tick.again()
		return
	}
	s.unpark()
	g.tick.stop(seq)
}

// readAnswer reads, holding the reading turn, until the answer to call id
// has been read, then parks the turn or passes it on. The answer itself
// comes on ch, as for any call. It returns early, passing the turn on,
// when the read is interrupted because ctx ended or the call's time is up
// (their markers are then on ch too). It reports false when the stream
// ended: the connection is closed and the turn is gone.
func (s *scheduler) readAnswer(ctx context.Context, id ID, ch chan *Message) bool {
	if len(ch) > 0 {
		// Answered (or expired) before the turn was taken.
		s.leaveTurn()
		return true
	}
	s.park.reading.Store(id.n) // the Conn's own calls have integer ids
	ok := s.readUntilAnswered(ctx, id, ch)
	s.park.reading.Store(0)
	if !ok {
		s.stopReading()
		return false
	}
	s.leaveTurn()
	return true
}

// readUntilAnswered is readAnswer's loop: it reads and dispatches until
// the answer to call id was read, ch has a marker, or the read was
// interrupted. It reports false when the stream ended.
func (s *scheduler) readUntilAnswered(ctx context.Context, id ID, ch chan *Message) bool {
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, s.interrupter.InterruptRead)
		defer stop()
	}
	for {
		m, ok := s.p.readMessage()
		if !ok {
			return false
		}
		if m != nil {
			if _, ok := s.p.dispatch(m, false); !ok {
				return false
			}
		}
		// Answered, expired or interrupted (m is nil then, or a decode
		// error was the answer): stop reading.
		if m == nil || len(ch) > 0 || m.IsResponse() && m.ID == id {
			return true
		}
	}
}

// interruptReading interrupts the read of call id, if it is reading.
func (s *scheduler) interruptReading(id ID) {
	if s.interrupter == nil {
		return
	}
	if n := s.park.reading.Load(); n != 0 && id == Int64ID(n) {
		s.interrupter.InterruptRead()
	}
}
