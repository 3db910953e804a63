package jsonrpc2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
)

// Handler handles the requests and notifications a [Conn] receives.
//
// For a request, the returned result (any value json can marshal, or a raw
// [jsontext.Value]) or error is sent back; an error that is not an *[Error]
// is sent as an internal error. For a notification the return values are
// ignored.
//
// Requests are handled concurrently, each with a context that is cancelled
// when the peer cancels the request or the connection closes; a handler
// that computes or waits for long holds up the messages behind it for a
// millisecond or two at most (sched.go says how). Notifications are
// handled one at a time, in the order they arrived; a response that
// arrives after notifications is delivered only once they were handled
// (so a call returns after the progress notifications sent before its
// answer were seen). A notification handler may call the peer with
// [Conn.Call].
type Handler interface {
	Handle(ctx context.Context, m *Message) (result any, err error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, m *Message) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, m *Message) (any, error) { return f(ctx, m) }

// ConnOptions configure a [Conn]. The zero value is usable.
type ConnOptions struct {
	// Handler receives incoming requests and notifications. Nil answers
	// every request with "method not found".
	Handler Handler
	// MaxInFlight bounds the incoming requests handled at once (default
	// 64). Requests beyond it wait in a queue of four times that size,
	// where a cancellation still reaches them; when the queue is full too,
	// the connection stops reading until a handler finishes. A handler
	// waiting on its own outgoing call does not count, so a handler that
	// asks the peer something cannot deadlock the connection.
	MaxInFlight int
	// ReplyToInvalid makes the connection answer a message it cannot
	// decode with a JSON-RPC error (servers do this; clients only log).
	ReplyToInvalid bool
	// Sequential, when set, names requests that are handled before
	// anything that arrives after them is looked at: a server's
	// initialize, so that a client that does not wait for its answer
	// still finds the session initialized.
	Sequential func(m *Message) bool
	// DrainTimeout, when positive, makes a clean end of input (io.EOF)
	// wait up to this long for the handlers in flight to finish and send
	// their answers before the connection closes. Servers use it so that
	// answers already being computed are not lost when the client closes
	// its side.
	DrainTimeout time.Duration
	// CallerReads lets a call read its own answer when no other goroutine
	// is reading, over a stream that implements [ReadInterrupter], which
	// saves a goroutine switch per call to a peer that is waited for
	// before the next call (callerturn.go says how). What the peer sends
	// between calls is still read within a millisecond or two. Clients set
	// it: most of what they read answers their calls.
	CallerReads bool
	// CancelMethod is the method of the notification that cancels a
	// request, with params {"requestId": id, "reason": text}: MCP's
	// "notifications/cancelled" (JSON-RPC itself has none). The Conn sends
	// it for a call whose context ends or whose time is up, and cancels
	// the context of the incoming request one names. Empty: calls are
	// abandoned without telling the peer, and no notification cancels a
	// request.
	CancelMethod string
	// Logger receives diagnostics (undecodable messages, handler panics).
	// Nil discards them.
	Logger *slog.Logger
}

// Conn is one JSON-RPC 2.0 peer over a [Stream]: it sends requests and
// matches their responses by id, dispatches incoming requests to its
// Handler concurrently (with a bound) and notifications in order, and
// turns context cancellation into the notification
// [ConnOptions].CancelMethod names.
type Conn struct {
	stream  Stream
	handler Handler
	opts    ConnOptions
	log     *slog.Logger

	ctx    context.Context // parent of every handler context; cancelled at close
	cancel context.CancelCauseFunc
	// reqParent is ctx without its cancellation: request contexts derive
	// from it, so that making one does not register it with ctx (close
	// cancels them itself, from the incoming map).
	reqParent context.Context

	nextID    atomic.Int64
	sem       chan struct{}
	callChans callChans

	mu       sync.Mutex
	pending  map[ID]pendingCall
	incoming map[ID]*incoming
	queue    []*incoming // requests waiting for a slot, at most 4×MaxInFlight
	closeErr error

	// notes carries notifications, and the responses and requests that
	// arrive behind them, to the goroutine that handles them in order,
	// which runs only while there are some (see runNotes).
	notes        chan *Message
	notesPending atomic.Int64 // queued, not yet handled
	notesBlocked atomic.Int64 // notification handlers waiting in Call
	notesRunning atomic.Bool  // a goroutine handles notes
	noteCtx      context.Context
	// deferred holds the ids of requests queued behind notifications,
	// with whether the peer cancelled them meanwhile (guarded by mu): a
	// notifications/cancelled right behind its request then reaches it.
	deferred map[ID]bool
	// stopWatch stops the watch on the context NewConn was given.
	stopWatch func() bool

	done      chan struct{} // closed when the connection is closed
	handlers  sync.WaitGroup
	batcher   Batcher   // the stream, when it batches answers
	requester Requester // the stream, when it answers calls directly
	// overlap tells whether the last call began while another waited for
	// its answer (guarded by mu; see parkedTurn).
	overlap   bool
	sched     scheduler // which goroutine reads, and which runs each request
	deadlines deadlines // of calls made with a Timeout; guarded by mu
	gaveUp    givenUp   // guarded by mu
	closeOnce sync.Once
	// notices counts notifications/cancelled still being sent: Close lets
	// them reach the peer (each is bounded by a second) before it closes.
	notices sync.WaitGroup
	closing bool // set by Close under mu: no notice is added after it
}

// NewConn starts a connection over stream. Handler contexts derive from
// ctx; cancelling ctx closes the connection.
func NewConn(ctx context.Context, stream Stream, opts *ConnOptions) *Conn {
	c := &Conn{
		stream:   stream,
		pending:  make(map[ID]pendingCall),
		incoming: make(map[ID]*incoming),
		done:     make(chan struct{}),
		notes:    make(chan *Message, 256),
	}
	if opts != nil {
		c.opts = *opts
	}
	c.handler = c.opts.Handler
	c.deadlines.epoch = time.Now()
	c.batcher, _ = As[Batcher](stream)
	c.requester, _ = As[Requester](stream)
	var interrupter ReadInterrupter
	if c.opts.CallerReads && c.requester == nil {
		interrupter, _ = As[ReadInterrupter](stream)
	}
	c.sched.init(c, c.done, interrupter)
	if c.handler == nil {
		c.handler = HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
			return nil, errorf(CodeMethodNotFound, "method not found: %s", m.Method)
		})
	}
	if c.opts.MaxInFlight <= 0 {
		c.opts.MaxInFlight = 64
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.sem = make(chan struct{}, c.opts.MaxInFlight)
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	c.reqParent = context.WithoutCancel(c.ctx)
	c.noteCtx = context.WithValue(c.ctx, notificationKey{}, true)
	// Nothing waits on ctx: an idle connection holds no goroutine for it.
	c.stopWatch = context.AfterFunc(ctx, func() { c.closeWith(context.Cause(ctx)) })
	if _, pushed := As[jsonrpcapi.Pusher](stream); pushed {
		// The transport hands over what arrives (receive): no goroutine
		// reads, so that a connection between messages holds none.
		c.sched.stopReading()
	} else {
		c.sched.startReading()
	}
	return c
}

// receive dispatches a message the transport pushes
// (Receive): what the reading goroutine does with a
// message it read, on the caller's goroutine, which waits only while the
// notification queue is full. It reports false once the connection is
// closed.
func (c *Conn) receive(m *Message) bool {
	_, ok := c.dispatch(m, false)
	return ok
}

// Done is closed when the connection has closed.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection closed, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Close closes the connection: in-flight handlers are cancelled, pending
// calls fail with [ErrClosed], and the stream is closed. Close first lets
// cancellation notices of abandoned calls reach the peer, then waits for the
// reading goroutine but not for handlers; see [Conn.Wait].
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	c.notices.Wait()
	c.closeWith(errors.New("closed by this side"))
	<-c.sched.readerDone
	return nil
}

// Wait blocks until the connection is closed and every handler returned.
func (c *Conn) Wait() error {
	<-c.done
	<-c.sched.readerDone
	c.handlers.Wait()
	c.sched.workers.Wait()
	c.notices.Wait()
	return c.Err()
}

func (c *Conn) closeWith(reason error) {
	c.closeOnce.Do(func() {
		err := reason
		if !errors.Is(err, ErrClosed) {
			err = fmt.Errorf("%w: %w", ErrClosed, reason)
		}
		c.mu.Lock()
		c.closeErr = err
		queued := c.queue
		c.queue = nil
		for _, in := range queued {
			delete(c.incoming, in.id)
		}
		running := make([]*incoming, 0, len(c.incoming))
		for _, in := range c.incoming {
			running = append(running, in)
		}
		// Calls waiting for answers fail.
		for id, p := range c.pending {
			delete(c.pending, id)
			p.ch <- &c.deadlines.closed
		}
		c.deadlines.stop()
		c.mu.Unlock()
		c.stopWatch()
		// Done first: a handler woken by its cancellation then finds the
		// connection closed and sends nothing.
		close(c.done)
		// A handler holding the reading turn may not return soon, and a
		// parked turn has nobody to read: another goroutine reads on, and
		// finds the stream closed.
		c.sched.releaseTurn()
		c.sched.unpark()
		for _, in := range queued {
			in.cancel(err)
			c.handlers.Done()
		}
		for _, in := range running {
			in.cancel(err)
		}
		c.cancel(err)
		c.stream.Close()
	})
}

// readMessage reads the next message. It returns nil for a message that
// could not be decoded (reported as it should be) and for a read cut
// short by [ReadInterrupter]; ok is false once the stream ended, which
// closed the connection.
func (c *Conn) readMessage() (m *Message, ok bool) {
	m, err := c.stream.Read()
	if err == nil {
		return m, true
	}
	var de *DecodeError
	switch {
	case errors.Is(err, ErrReadInterrupted):
		return nil, true
	case errors.As(err, &de):
		c.invalid(de)
		return nil, true
	}
	if errors.Is(err, io.EOF) && c.opts.DrainTimeout > 0 {
		c.drain()
	}
	if errors.Is(err, io.EOF) {
		err = peerClosed{}
	}
	c.closeWith(err)
	return nil, false
}

// peerClosed is why a connection ends when its stream's input ends: it
// matches io.EOF, so that a server's Run can tell a client that went away
// in order from a failure.
type peerClosed struct{}

func (peerClosed) Error() string        { return "the peer closed the connection" }
func (peerClosed) Is(target error) bool { return target == io.EOF }

// dispatch sends a message read where it goes. With inline, a request
// that can start at once is returned for the reader to run; without, it
// starts on a goroutine of its own. ok is false when the connection
// closed meanwhile.
func (c *Conn) dispatch(m *Message, inline bool) (in *incoming, ok bool) {
	switch {
	case m.IsResponse():
		if c.notesPending.Load() > 0 && c.notesBlocked.Load() == 0 {
			// Notifications sent before this answer (progress, say) are
			// handled first.
			return nil, c.enqueueNote(m)
		}
		c.deliver(m)
		return nil, true
	case m.IsNotification():
		if m.Method == c.opts.CancelMethod && m.Method != "" {
			c.cancelled(m)
		}
		return nil, c.enqueueNote(m)
	case c.notesPending.Load() > 0 && c.notesBlocked.Load() == 0:
		// Start it once the notifications before it were handled
		// (notifications/initialized, say); a cancellation that comes
		// meanwhile must still reach it.
		c.mu.Lock()
		if c.deferred == nil {
			c.deferred = make(map[ID]bool)
		}
		c.deferred[m.ID] = false
		c.mu.Unlock()
		return nil, c.enqueueNote(m)
	}
	return c.request(m, inline)
}

func (c *Conn) invalid(de *DecodeError) {
	// Only a response can answer one of our calls: a malformed request
	// may well carry the id of one of them, as each side numbers its own
	// requests.
	if de.ID.IsValid() && !de.request {
		c.mu.Lock()
		p, ok := c.pending[de.ID]
		if ok {
			delete(c.pending, de.ID)
		}
		c.mu.Unlock()
		if ok {
			// The answer to one of our calls was malformed: the call fails
			// with the reason instead of waiting forever.
			p.ch <- &Message{ID: de.ID, Error: &Error{Code: de.Err.Code, Message: "invalid response: " + de.Err.Message}}
			return
		}
	}
	c.log.Warn("jsonrpc: invalid message", "error", de.Err.Message, "id", de.ID.String())
	if c.opts.ReplyToInvalid {
		c.stream.Write(c.ctx, &Message{ID: de.ID, Error: de.Err})
	}
}

func (c *Conn) deliver(m *Message) {
	c.mu.Lock()
	p, ok := c.pending[m.ID]
	if ok {
		delete(c.pending, m.ID)
		c.mu.Unlock()
		p.ch <- m
		return
	}
	late := c.gaveUp.has(m.ID)
	var lone ID
	if !late && len(c.pending) == 1 {
		// An answer whose id no call has, while one call waits: the
		// peer got its id wrong (a string for a number, say), and the
		// call would wait for its timeout, or for ever, for an answer
		// that came. It fails now, saying so.
		for id, q := range c.pending {
			lone, p = id, q
		}
		delete(c.pending, lone)
	}
	c.mu.Unlock()
	switch {
	case lone.IsValid():
		c.log.Warn("jsonrpc: an answer with an id no call has", "id", m.ID.String(), "call", lone.String())
		p.ch <- &Message{ID: lone, Error: errorf(CodeInvalidRequest,
			"invalid response: the peer answered id %s, but the call in flight has id %s", m.ID, lone)}
	case late:
		c.log.Debug("jsonrpc: a late answer to a call given up", "id", m.ID.String())
	default:
		c.log.Warn("jsonrpc: an answer with an id no call has", "id", m.ID.String())
	}
}

// dropped is admit's refusal of a request the peer cancelled before it
// was admitted: it gets no answer.
var dropped Message

// admit registers request m under its id and returns it with c.mu held.
// It returns nil (and c.mu not held) when the connection is closed, or
// when the id is in use, with the answer to send then.
func (c *Conn) admit(m *Message) (in *incoming, refusal *Message) {
	ctx, cancel := context.WithCancelCause(c.reqParent)
	in = &incoming{id: m.ID, m: m, cancel: cancel, conn: c}
	in.rc = reqCtx{Context: ctx, in: in}
	in.ctx = &in.rc
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		cancel(c.closeErr)
		return nil, nil
	}
	if cancelled, queued := c.deferred[m.ID]; queued {
		delete(c.deferred, m.ID)
		if cancelled {
			// "Servers receiving cancellation notifications SHOULD ...
			// not send a response for the cancelled request."
			c.mu.Unlock()
			cancel(nil)
			return nil, &dropped
		}
	}
	if _, dup := c.incoming[m.ID]; dup {
		c.mu.Unlock()
		cancel(nil)
		return nil, &Message{ID: m.ID, Error: errorf(CodeInvalidRequest, "request id %s is already in use", m.ID)}
	}
	c.incoming[m.ID] = in
	c.handlers.Add(1)
	return in, nil
}

// request starts a handler for m, or queues it when every slot is taken.
// With inline, a request that can start at once is returned, holding its
// slot, for the caller to run. ok is false when the connection closed
// while it waited.
func (c *Conn) request(m *Message, inline bool) (run *incoming, ok bool) {
	in, refusal := c.admit(m)
	if in == nil {
		if refusal == &dropped {
			return nil, true
		}
		if refusal != nil {
			c.stream.Write(c.ctx, refusal)
			return nil, true
		}
		return nil, false
	}
	if seq := c.opts.Sequential; seq != nil && seq(m) {
		c.mu.Unlock()
		select {
		case c.sem <- struct{}{}:
		case <-c.done:
			return nil, false
		}
		in.held = true
		c.run(in)
		return nil, true
	}
	if len(c.queue) == 0 && c.trySlot() {
		c.mu.Unlock()
		if inline {
			in.held = true
			return in, true
		}
		c.start(in)
		return nil, true
	}
	if len(c.queue) < 4*c.opts.MaxInFlight {
		c.queue = append(c.queue, in)
		c.mu.Unlock()
		return nil, true
	}
	c.mu.Unlock()
	select {
	case c.sem <- struct{}{}:
		c.start(in)
		return nil, true
	case <-c.done:
		c.mu.Lock()
		delete(c.incoming, m.ID)
		c.mu.Unlock()
		in.cancel(nil)
		c.handlers.Done()
		return nil, false
	}
}

func (c *Conn) trySlot() bool {
	select {
	case c.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

// start runs a request's handler on a slot it was given.
func (c *Conn) start(in *incoming) {
	in.held = true
	c.sched.hand(in)
}

// release gives back a slot: to the first queued request still wanted, or
// to the pool.
func (c *Conn) release() {
	c.mu.Lock()
	for len(c.queue) > 0 {
		next := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		if next.cancelledByPeer {
			delete(c.incoming, next.id)
			next.cancel(nil)
			c.handlers.Done()
			continue
		}
		c.mu.Unlock()
		c.start(next)
		return
	}
	<-c.sem
	c.mu.Unlock()
}

// run runs the handler of in and sends its answer. When in held the
// reading turn, it reports whether it still does: the caller is then the
// reader again.
func (c *Conn) run(in *incoming) (turn bool) {
	defer c.handlers.Done()
	defer in.finish()
	m := in.m
	reply := c.handle(in.ctx, m, in)
	if in.hasTurn {
		turn = c.sched.reclaimTurn()
	}
	if reply == nil {
		return turn
	}
	select {
	case <-c.done:
		return turn // closed: the stream is, or is about to be
	default:
	}
	var werr error
	if turn && c.batcher != nil && c.batcher.Buffered() {
		werr = c.batcher.WriteBuffered(c.ctx, reply)
	} else {
		werr = c.stream.Write(c.ctx, reply)
	}
	if werr != nil && reply.Error == nil {
		var e *Error
		if errors.As(werr, &e) && e.Code == CodeInternalError {
			// The result could not be encoded: say so instead of going silent.
			c.stream.Write(c.ctx, &Message{ID: m.ID, Error: e})
		}
	}
	return turn
}

// handle runs the handler of a request and returns its reply, or nil
// when the peer cancelled it: "Servers receiving cancellation
// notifications SHOULD ... not send a response for the cancelled
// request."
func (c *Conn) handle(ctx context.Context, m *Message, in *incoming) *Message {
	result, err := c.safeHandle(ctx, m)
	c.mu.Lock()
	delete(c.incoming, m.ID)
	cancelled := in.cancelledByPeer
	c.mu.Unlock()
	in.cancel(nil)
	if cancelled {
		return nil
	}
	reply := &in.reply
	*reply = Message{ID: m.ID}
	if err != nil {
		reply.Error = AsError(err)
	} else if raw, ok := result.(jsontext.Value); ok {
		reply.Result = raw
	} else if result != nil {
		reply.Body = result
	}
	return reply
}

// serve handles an incoming request on the calling goroutine and returns
// the reply to send, or nil (Serve).
func (c *Conn) serve(m *Message) *Message {
	in, refusal := c.admit(m)
	if in == nil {
		if refusal == &dropped {
			return nil
		}
		return refusal
	}
	c.mu.Unlock()
	defer c.handlers.Done()
	select {
	case c.sem <- struct{}{}:
	case <-c.done:
		c.mu.Lock()
		delete(c.incoming, m.ID)
		c.mu.Unlock()
		in.cancel(nil)
		return nil
	}
	in.held = true
	defer in.finish()
	return c.handle(in.ctx, m, in)
}

func (c *Conn) safeHandle(ctx context.Context, m *Message) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("jsonrpc: handler panicked", "method", m.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, errorf(CodeInternalError, "internal error: handler for %s panicked: %v", m.Method, r)
		}
	}()
	return c.handler.Handle(ctx, m)
}

// Call sends a request and waits for its response, which it returns. An
// error response is returned as the message and as an *[Error]. When ctx is
// cancelled first, the peer is sent [ConnOptions].CancelMethod and Call
// returns the context's cause. A call made once the connection had closed
// fails with an error that matches both [ErrClosed] and [ErrNotSent].
func (c *Conn) Call(ctx context.Context, method string, params any) (*Message, error) {
	return c.callWith(ctx, method, params, nil)
}

// callWith is Call with options (Call); o may be nil.
func (c *Conn) callWith(ctx context.Context, method string, params any, o *jsonrpcapi.CallOptions) (*Message, error) {
	if o == nil {
		o = new(jsonrpcapi.CallOptions) // on the stack: o does not escape
	}
	d := o.Timeout
	n := c.nextID.Add(1)
	id := Int64ID(n)
	p := pendingCall{ch: c.callChans.get()}
	if d > 0 {
		p.deadline = c.deadlines.after(d)
	}
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return nil, notSent{err}
	}
	c.pending[id] = p
	c.overlap = len(c.pending) > 1
	if d > 0 {
		c.deadlines.add(p.deadline, c.expireCalls)
	}
	c.mu.Unlock()
	if o.OnID != nil {
		o.OnID(n)
	}

	// A notification handler waiting here must get its answer directly,
	// not behind itself in the notification queue.
	if ctx.Value(notificationKey{}) != nil {
		c.notesBlocked.Add(1)
		defer c.notesBlocked.Add(-1)
	}
	req := &Message{ID: id, Method: method}
	if raw, ok := params.(jsontext.Value); ok {
		req.Params = raw
	} else if params != nil {
		req.Body = params
	}
	if c.requester != nil {
		r, err := c.requester.Request(ctx, req)
		if err != nil {
			return nil, c.sendFailed(id, err)
		}
		if r != nil {
			c.forget(id)
			if r.Error != nil {
				return r, r.Error
			}
			return r, nil
		}
	} else if err := c.stream.Write(ctx, req); err != nil {
		return nil, c.sendFailed(id, err)
	} else if c.sched.interrupter != nil && c.sched.takeParked() && !c.sched.readAnswer(ctx, id, p.ch) {
		return nil, c.Err()
	}

	// A handler waiting on its own outgoing calls gives back its slot, so
	// that the responses it waits for can be read.
	if in, ok := ctx.Value(incomingKey{}).(*incoming); ok && in.conn == c {
		in.startCall()
		defer in.endCall()
	}
	// Whatever ends the call (its answer, its deadline, the connection's
	// close) comes on p.ch, so that only the context needs another case.
	var r *Message
	if done := ctx.Done(); done == nil {
		r = <-p.ch
	} else {
		select {
		case r = <-p.ch:
		case <-done:
			return nil, c.abandon(ctx, id, context.Cause(ctx))
		}
	}
	// The one message meant for p.ch was taken: nothing sends on it again.
	c.callChans.put(p.ch)
	switch {
	case r == &c.deadlines.expired:
		return nil, c.abandon(ctx, id, o.Expired(method))
	case r == &c.deadlines.closed:
		return nil, c.Err()
	case r.Error != nil:
		return r, r.Error
	}
	return r, nil
}

// sendFailed forgets call id, whose request the stream failed to send,
// and returns the call's error: the stream's when it says the request
// never left ([ErrNotSent]), else why the connection closed, if it did.
// A failed write alone does not say that the peer did not get the
// request (an HTTP POST may fail after the server took it).
func (c *Conn) sendFailed(id ID, err error) error {
	c.forget(id)
	if errors.Is(err, ErrNotSent) {
		return err
	}
	if cerr := c.Err(); cerr != nil {
		return cerr
	}
	return err
}

func (c *Conn) forget(id ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.gaveUp.add(id)
	c.mu.Unlock()
}

// CallResult is [Conn.Call] followed by decoding the result into out.
func (c *Conn) CallResult(ctx context.Context, method string, params, out any) error {
	r, err := c.Call(ctx, method, params)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", method, err)
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	select {
	case <-c.done:
		return c.Err()
	default:
	}
	m := &Message{Method: method}
	if raw, ok := params.(jsontext.Value); ok {
		m.Params = raw
	} else if params != nil {
		m.Body = params
	}
	return c.stream.Write(ctx, m)
}

// Stream returns the stream the connection runs over.
func (c *Conn) Stream() Stream { return c.stream }

// RequestID returns the id of the incoming request whose handler ctx
// belongs to.
func RequestID(ctx context.Context) (ID, bool) {
	in, ok := ctx.Value(incomingKey{}).(*incoming)
	if !ok {
		return ID{}, false
	}
	return in.id, true
}

// callsWaiting reports, for the scheduler, whether calls wait for their
// answers, whether the last one overlapped another, and whether the
// connection is closed.
func (c *Conn) callsWaiting() (waiting, overlap, closed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) > 0, c.overlap, c.closeErr != nil
}
