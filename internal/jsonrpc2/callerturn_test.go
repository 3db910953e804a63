package jsonrpc2

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"

	"github.com/go-json-experiment/json"
)

// intPipe is a pipeStream whose Read can be interrupted, and which counts
// the reads in progress and those made by a call waiting for its answer.
type intPipe struct {
	*pipeStream
	intr     chan struct{}
	reading  atomic.Int32
	byCaller atomic.Int32 // reads that returned a message to a call reading its answer
	byOthers atomic.Int32
}

func newIntPipe() (a, b *intPipe) {
	pa, pb := newPipe()
	return &intPipe{pipeStream: pa, intr: make(chan struct{}, 1)}, &intPipe{pipeStream: pb, intr: make(chan struct{}, 1)}
}

func (p *intPipe) InterruptRead() {
	select {
	case p.intr <- struct{}{}:
	default:
	}
}

func (p *intPipe) Read() (*Message, error) {
	p.reading.Add(1)
	defer p.reading.Add(-1)
	line, err := p.in.popOr(p.closed, p.intr)
	if err != nil {
		return nil, err
	}
	if onStack("(*scheduler).readAnswer") {
		p.byCaller.Add(1)
	} else {
		p.byOthers.Add(1)
	}
	return Decode(line, p.lim)
}

func onStack(fn string) bool {
	var pcs [32]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

// callerPair returns a client Conn with CallerReads over an interruptible
// pipe and a server Conn with opts. The client's handler sends the
// notifications it gets on notes, when notes is not nil, and answers
// requests with "client answer".
func callerPair(t *testing.T, notes chan<- string, opts *ConnOptions) (client, server *Conn, cs *intPipe) {
	a, b := newIntPipe()
	client = newConn(context.Background(), a, &ConnOptions{CallerReads: true, Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
		if m.IsNotification() {
			if notes != nil {
				notes <- m.Method
			}
			return nil, nil
		}
		return "client answer", nil
	})})
	server = newConn(context.Background(), b, opts)
	t.Cleanup(func() {
		client.Close()
		server.Close()
		client.Wait()
		server.Wait()
	})
	return client, server, a
}

// A call made between calls reads its own answer; the turn is parked
// between calls and goes back to a worker after a tick or two.
func TestCallerReadsItsAnswer(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _, cs := callerPair(t, nil, echo)
		ctx := context.Background()
		for i := range 5 {
			r, err := client.Call(ctx, "m", []int{i})
			if err != nil || string(r.Result) != fmt.Sprintf("[%d]", i) {
				t.Fatalf("call %d: %v %v", i, r, err)
			}
			synctest.Wait()
			if n := cs.reading.Load(); n != 0 {
				t.Errorf("after call %d: %d reads in progress, want the turn parked", i, n)
			}
		}
		// The first answer is read by the worker that read from the start;
		// the next ones by their calls.
		if c, o := cs.byCaller.Load(), cs.byOthers.Load(); c != 4 || o != 1 {
			t.Errorf("answers read by calls: %d, by others: %d; want 4 and 1", c, o)
		}
		time.Sleep(2 * turnTick)
		synctest.Wait()
		if n := cs.reading.Load(); n != 1 {
			t.Errorf("idle: %d reads in progress, want a worker reading", n)
		}
		r, err := client.Call(ctx, "m", []string{"again"})
		if err != nil || string(r.Result) != `["again"]` {
			t.Fatalf("call after idle: %v %v", r, err)
		}
	})
}

// What the peer sends between calls (a notification, a request) is read
// within two ticks, while the turn is parked.
func TestParkedTurnReadsPeerMessages(t *testing.T) {
	bubble(t, func(t *testing.T) {
		notes := make(chan string, 1)
		client, server, _ := callerPair(t, notes, echo)
		ctx := context.Background()
		if _, err := client.Call(ctx, "m", nil); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		server.Notify(ctx, "hello", nil)
		if m := <-notes; m != "hello" || time.Since(start) > 2*turnTick {
			t.Errorf("notification %q after %v", m, time.Since(start))
		}
		start = time.Now()
		r, err := server.Call(ctx, "ask", nil)
		if err != nil || string(r.Result) != `"client answer"` || time.Since(start) > 2*turnTick {
			t.Errorf("server's call: %v %v after %v", r, err, time.Since(start))
		}
	})
}

// Messages a call reads on its way to its answer go where they belong: a
// request from the peer is answered while the call still waits.
func TestCallerReadsOtherMessages(t *testing.T) {
	bubble(t, func(t *testing.T) {
		notes := make(chan string, 10)
		var server *Conn
		client, server, a := callerPair(t, notes, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.IsNotification() {
				return nil, nil
			}
			server.Notify(ctx, "progress", nil)
			r, err := server.Call(ctx, "ask", nil) // answered by a worker while the call reads
			if err != nil {
				return nil, err
			}
			return r.Result, nil
		}))
		ctx := context.Background()
		for range 3 {
			r, err := client.Call(ctx, "m", nil)
			if err != nil || string(r.Result) != `"client answer"` {
				t.Fatalf("call: %v %v", r, err)
			}
			if m := <-notes; m != "progress" {
				t.Errorf("notification %q", m)
			}
		}
		if a.byCaller.Load() == 0 {
			t.Error("no call read its answer")
		}
	})
}

// A call's deadline, or its context, ends a read in progress: the call
// returns at once, and the connection goes on.
func TestCallerReadInterrupted(t *testing.T) {
	bubble(t, func(t *testing.T) {
		release := make(chan struct{})
		client, _, cs := callerPair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "slow" {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return m.Method, nil
		}))
		ctx := context.Background()
		if _, err := client.Call(ctx, "fast", nil); err != nil {
			t.Fatal(err)
		}
		errSlow := errors.New("too slow")
		start := time.Now()
		if _, err := client.callWith(ctx, "slow", nil, &jsonrpcapi.CallOptions{Timeout: time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }}); err != errSlow || time.Since(start) != time.Second {
			t.Errorf("timed out call: %v after %v", err, time.Since(start))
		}
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if _, err := client.Call(cctx, "slow", nil); !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Errorf("cancelled call: %v after %v", err, time.Since(start))
		}
		for i := range 3 {
			// The worker that read the last answer parks the turn only once
			// it sees no call waiting: a call that starts before then finds
			// the turn with the worker, which reads its answer. Under load
			// the caller may win that race every time; waiting until every
			// goroutine is blocked leaves the turn parked for the call.
			synctest.Wait()
			r, err := client.Call(ctx, "fast", nil)
			if err != nil || string(r.Result) != `"fast"` {
				t.Fatalf("call %d after: %v %v", i, r, err)
			}
		}
		if cs.byCaller.Load() == 0 {
			t.Error("no call read its answer")
		}
		close(release)
	})
}

// Closing the connection, or the peer's end of the stream, ends a call
// that reads its answer, and a turn that is parked sees the end too.
func TestCallerReadsEnd(t *testing.T) {
	t.Run("close", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			client, _, _ := callerPair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
				if m.Method == "block" {
					<-ctx.Done()
				}
				return nil, nil
			}))
			ctx := context.Background()
			if _, err := client.Call(ctx, "fast", nil); err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(time.Second, func() { client.Close() })
			if _, err := client.Call(ctx, "block", nil); !errors.Is(err, ErrClosed) {
				t.Errorf("call: %v, want ErrClosed", err)
			}
			client.Wait()
		})
	})
	t.Run("peer ends while parked", func(t *testing.T) {
		bubble(t, func(t *testing.T) {
			client, server, _ := callerPair(t, nil, echo)
			if _, err := client.Call(context.Background(), "fast", nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			server.Close()
			<-client.Done()
			if d := time.Since(start); d > 2*turnTick {
				t.Errorf("the end was seen after %v", d)
			}
			client.Wait()
		})
	})
}

// Many calls at once, with notifications and requests from the peer in
// between, and pauses that let calls run alone: every call gets its own
// answer, whoever reads it.
func TestCallerReadsConcurrent(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var server *Conn
		var asks atomic.Int32
		client, server, a := callerPair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.IsNotification() {
				return nil, nil
			}
			var ns []int
			if json.Unmarshal(m.Params, &ns) != nil || len(ns) != 1 {
				return nil, errors.New("bad params")
			}
			n := ns[0]
			switch n % 7 {
			case 0:
				server.Notify(ctx, "note", nil)
			case 3:
				if _, err := server.Call(ctx, "ask", nil); err == nil {
					asks.Add(1)
				}
			case 5:
				time.Sleep(time.Duration(n%3) * time.Millisecond)
			}
			return n, nil
		}))
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				for i := range 50 {
					n := w*1000 + i
					r, err := client.Call(context.Background(), "m", []int{n})
					if err != nil || string(r.Result) != fmt.Sprint(n) {
						t.Errorf("call %d: %v %v", n, r, err)
						return
					}
					if i%10 == 9 {
						time.Sleep(time.Duration(w%4) * turnTick)
					}
				}
			})
		}
		wg.Wait()
		// Overlapping calls leave the reading to a worker (parkedTurn's
		// concurrent), so how many answers calls read depends on timing.
		if asks.Load() == 0 {
			t.Errorf("no server call was answered (answers read by calls: %d)", a.byCaller.Load())
		}
	})
}

// Calls that overlap leave the reading to a worker that keeps the turn; a
// call alone again lets the turn be parked after its answer.
func TestOverlappingCallsKeepWorker(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _, cs := callerPair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			time.Sleep(time.Millisecond)
			return m.Method, nil
		}))
		ctx := context.Background()
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := client.Call(ctx, "m", nil); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		synctest.Wait()
		if n := cs.reading.Load(); n != 1 {
			t.Errorf("after overlapping calls: %d reads in progress, want the worker's", n)
		}
		for range 2 {
			if _, err := client.Call(ctx, "m", nil); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		if n := cs.reading.Load(); n != 0 {
			t.Errorf("after a call alone: %d reads in progress, want the turn parked", n)
		}
	})
}
