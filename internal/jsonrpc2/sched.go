package jsonrpc2

import "sync"

// scheduler decides, for one Conn, which goroutine reads the stream next
// and which runs each request; the Conn decides what a message means
// (connSide). Its policy:
//
//   - One goroutine at a time holds the reading turn. It reads and
//     dispatches messages; a request that can start at once is run by
//     that goroutine itself, which reads the next message once the
//     handler returns, as a sequential server would: no goroutine switch
//     per request when handlers are quick.
//   - A handler that is not quick (it computes or waits for longer than a
//     millisecond or two, or calls the peer) has the turn passed to
//     another goroutine, so that the messages behind it wait that long at
//     most (turnGuard, turn.go).
//   - With ConnOptions.CallerReads, a call may read its own answer when
//     nobody else reads: the turn is then parked for the next call to
//     take (parkedTurn, callerturn.go).
//   - Goroutines are workers that are reused: a worker runs requests one
//     after the other and takes its turn at reading, until the connection
//     closes. Reusing goroutines keeps the stacks that handlers grew (a
//     fresh goroutine grows its stack anew for every request, which costs
//     more than the handling of a small one); there are never more
//     workers than one more than the most requests the connection has
//     handled at once.
type scheduler struct {
	p    connSide        // the Conn
	done <-chan struct{} // the Conn's: closed when it is closed
	// readerDone is closed when reading ended: the stream ended or the
	// connection closed.
	readerDone chan struct{}

	work     chan *incoming // hands requests, and the reading turn, to idle workers
	readTurn *incoming      // sent on work: the worker becomes the reader
	workers  sync.WaitGroup
	turn     turnGuard
	// interrupter is the stream, when calls may read their answers
	// (ConnOptions.CallerReads).
	interrupter ReadInterrupter
	park        parkedTurn
}

// connSide is what the scheduler needs of its Conn.
type connSide interface {
	// readMessage reads the next message. It returns nil for a message
	// that could not be decoded and for an interrupted read; ok is false
	// once the stream ended (the connection is then closed).
	readMessage() (m *Message, ok bool)
	// dispatch sends a message read where it goes. With inline, a
	// request that can start at once is returned, holding its slot, for
	// the caller to run; ok is false when the connection closed.
	dispatch(m *Message, inline bool) (in *incoming, ok bool)
	// run runs a request's handler and sends its answer. For a request
	// that held the reading turn, it reports whether it still does.
	run(in *incoming) (turn bool)
	// callsWaiting reports whether calls wait for their answers, whether
	// the last one overlapped another, and whether the connection is
	// closed.
	callsWaiting() (waiting, overlap, closed bool)
}

// init prepares s for the Conn p, whose done channel is done;
// interrupter is the stream when calls may read their answers.
func (s *scheduler) init(p connSide, done <-chan struct{}, interrupter ReadInterrupter) {
	s.p, s.done, s.interrupter = p, done, interrupter
	s.readerDone = make(chan struct{})
	s.work = make(chan *incoming)
	s.readTurn = new(incoming)
	s.turn.tick.fn = s.turnTick
	s.park.tick.fn = s.parkTick
}

// startReading starts the first worker, with the reading turn.
func (s *scheduler) startReading() {
	s.workers.Add(1)
	go s.worker(s.readTurn)
}

// read reads and dispatches messages until the stream ends (it then
// returns nil), or until a request can start at once: it then returns the
// request, for its caller to run, which may keep the reading turn while
// the handler runs (see [turnGuard]). The request's handler thus starts
// without a goroutine switch, and when it is quick, the next message is
// read without one either.
func (s *scheduler) read() *incoming {
	for {
		m, ok := s.p.readMessage()
		if !ok {
			return s.stopReading()
		}
		if m == nil {
			continue
		}
		in, ok := s.p.dispatch(m, true)
		switch {
		case !ok:
			return s.stopReading()
		case in != nil:
			if !s.holdTurn(in) {
				s.passReadTurn()
			}
			return in
		case m.IsResponse() && s.interrupter != nil && s.parkIfIdle():
			return turnParked
		}
	}
}

// stopReading marks the end of reading. It returns nil, read's result
// then.
func (s *scheduler) stopReading() *incoming {
	close(s.readerDone)
	return nil
}

// passReadTurn makes an idle worker, or a new one, the reader.
func (s *scheduler) passReadTurn() { s.hand(s.readTurn) }

// hand gives a request that holds its slot (or the reading turn) to an
// idle worker, or to a new one.
func (s *scheduler) hand(in *incoming) {
	select {
	case s.work <- in:
	default:
		s.workers.Add(1)
		go s.worker(in)
	}
}

// worker runs requests one after the other, and takes its turn at
// reading (given s.readTurn), until the connection closes.
func (s *scheduler) worker(in *incoming) {
	defer s.workers.Done()
	for {
		if in == s.readTurn {
			if in = s.read(); in == nil {
				return
			}
		}
		if in == turnParked {
			// The turn waits for the next call (callerturn.go).
			select {
			case in = <-s.work:
			case <-s.done:
				return
			}
			continue
		}
		if s.p.run(in) {
			in = s.readTurn
			continue
		}
		select {
		case in = <-s.work:
		case <-s.done:
			return
		}
	}
}
