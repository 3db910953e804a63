package jsonrpc2

import (
	"sync"
	"time"
)

// pendingCall is an outgoing call waiting for its answer. Exactly one
// message is sent on ch, by whoever removes the call from Conn.pending:
// the answer, or one of the markers of deadlines.
type pendingCall struct {
	ch       chan *Message // from Conn.callChans
	deadline time.Duration // on the deadlines clock; 0: none
}

// callChans keeps the channels of a connection's answered calls for its
// next ones: a channel of pointers with a buffer is two allocations. A
// call gives its channel back only once it has received on it; one that
// gave up waiting may yet be sent to, so its channel is left to the
// collector. The pool is the connection's, not the package's: a channel
// belongs to the synctest bubble it was made in, as a connection does.
type callChans struct{ pool sync.Pool }

func (cc *callChans) get() chan *Message {
	if ch, ok := cc.pool.Get().(chan *Message); ok {
		return ch
	}
	return make(chan *Message, 1)
}

func (cc *callChans) put(ch chan *Message) { cc.pool.Put(ch) }

// deadlines bounds the calls made with a Timeout with one timer
// per connection rather than one per call: the timer is set for the
// earliest deadline, and a call whose deadline comes later (the usual
// case, as calls share a timeout) costs no timer operation at all. When
// it fires, the timer fails the calls whose time is up and is set again
// for the earliest left. Its fields are guarded by Conn.mu.
type deadlines struct {
	epoch time.Time // the clock's zero (monotonic), set by NewConn
	timer *time.Timer
	next  time.Duration // what timer is set for; 0: not set

	// Markers sent on a pendingCall's ch in place of an answer.
	expired, closed Message
}

// after returns the deadline d from now.
func (dl *deadlines) after(d time.Duration) time.Duration {
	return time.Since(dl.epoch) + d
}

// add makes sure the timer fires by deadline, calling expire.
func (dl *deadlines) add(deadline time.Duration, expire func()) {
	if dl.next != 0 && dl.next <= deadline {
		return
	}
	dl.next = deadline
	wait := deadline - time.Since(dl.epoch)
	if dl.timer == nil {
		dl.timer = time.AfterFunc(wait, expire)
	} else {
		dl.timer.Reset(wait)
	}
}

func (dl *deadlines) stop() {
	if dl.timer != nil {
		dl.timer.Stop()
	}
	dl.next = 0
}

// expireCalls is the deadline timer's: it fails the calls whose time is
// up and sets the timer for the earliest deadline left.
func (c *Conn) expireCalls() {
	c.mu.Lock()
	defer c.mu.Unlock()
	dl := &c.deadlines
	now := time.Since(dl.epoch)
	dl.next = 0
	if c.closeErr != nil {
		return
	}
	for id, p := range c.pending {
		switch {
		case p.deadline == 0:
		case p.deadline <= now:
			delete(c.pending, id)
			c.gaveUp.add(id)
			p.ch <- &dl.expired
			c.sched.interruptReading(id) // when it reads its answer itself
		case dl.next == 0 || p.deadline < dl.next:
			dl.next = p.deadline
		}
	}
	if dl.next != 0 {
		dl.timer.Reset(dl.next - now)
	}
}
