package jsonrpc2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"

	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// bubble runs f in a synctest bubble, checking for leaked goroutines
// afterwards. Time inside is fake, and a test that would hang panics with
// a deadlock report instead.
func bubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	leakcheck.Check(t)
	synctest.Test(t, f)
}

// pair returns two connected Conns, closed when the test ends.
func pair(t *testing.T, clientOpts, serverOpts *ConnOptions) (client, server *Conn) {
	a, b := newPipe()
	client = newConn(context.Background(), a, clientOpts)
	server = newConn(context.Background(), b, serverOpts)
	t.Cleanup(func() {
		client.Close()
		server.Close()
		client.Wait()
		server.Wait()
	})
	return client, server
}

// withPeer returns a Conn whose other end the test drives by hand.
func withPeer(t *testing.T, opts *ConnOptions) (*Conn, *rawPeer) {
	s, p := newRawPeer(t)
	c := newConn(context.Background(), s, opts)
	t.Cleanup(func() {
		c.Close()
		c.Wait()
	})
	return c, p
}

func handle(f func(ctx context.Context, m *Message) (any, error)) *ConnOptions {
	return &ConnOptions{Handler: HandlerFunc(f)}
}

// echo answers every request with its params.
var echo = handle(func(ctx context.Context, m *Message) (any, error) {
	if m.Params == nil {
		return nil, nil
	}
	return m.Params, nil
})

func TestCallResponse(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _ := pair(t, nil, echo)
		ctx := context.Background()
		for _, tc := range []struct {
			params any
			want   string
		}{
			{jsontext.Value(`{"a":[1,2]}`), `{"a":[1,2]}`},
			{map[string]string{"k": "v"}, `{"k":"v"}`},
			{[]int{1, 2, 3}, `[1,2,3]`},
			{nil, `{}`},
		} {
			r, err := client.Call(ctx, "echo", tc.params)
			if err != nil {
				t.Fatalf("Call(%v): %v", tc.params, err)
			}
			if string(r.Result) != tc.want || !r.IsResponse() || r.Error != nil {
				t.Errorf("Call(%v) = %s, want %s", tc.params, r.Result, tc.want)
			}
		}
		var out struct{ K string }
		if err := client.CallResult(ctx, "echo", map[string]string{"K": "v"}, &out); err != nil || out.K != "v" {
			t.Errorf("CallResult = %+v, %v", out, err)
		}
		if err := client.CallResult(ctx, "echo", nil, nil); err != nil {
			t.Errorf("CallResult with nil out: %v", err)
		}
		var bad []int
		err := client.CallResult(ctx, "echo", map[string]int{"a": 1}, &bad)
		if err == nil || !strings.Contains(err.Error(), "decoding the result of echo") {
			t.Errorf("CallResult into the wrong type: %v", err)
		}
	})
}

func TestCallErrorResponse(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			switch m.Method {
			case "rpc":
				return nil, &Error{Code: CodeInvalidParams, Message: "bad name", Data: jsontext.Value(`{"field":"name"}`)}
			case "wrapped":
				return nil, fmt.Errorf("context: %w", NewError(-32042, "needs elicitation"))
			default:
				return nil, errors.New("disk on fire")
			}
		}))
		ctx := context.Background()
		for _, tc := range []struct {
			method string
			code   int64
			msg    string
			data   string
		}{
			{"rpc", CodeInvalidParams, "bad name", `{"field":"name"}`},
			{"wrapped", -32042, "needs elicitation", ""},
			{"plain", CodeInternalError, "disk on fire", ""},
		} {
			r, err := client.Call(ctx, tc.method, nil)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: error %v is not an *Error", tc.method, err)
			}
			if e.Code != tc.code || e.Message != tc.msg || string(e.Data) != tc.data {
				t.Errorf("%s: error = %+v", tc.method, e)
			}
			if r == nil || r.Error != e {
				t.Errorf("%s: the response message is not returned with the error", tc.method)
			}
		}
		err := client.CallResult(ctx, "rpc", nil, new(any))
		if !errors.Is(err, &Error{Code: CodeInvalidParams}) {
			t.Errorf("CallResult error = %v", err)
		}
	})
}

func TestDefaultHandler(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _ := pair(t, nil, nil)
		_, err := client.Call(context.Background(), "tools/list", nil)
		if !errors.Is(err, &Error{Code: CodeMethodNotFound}) || !strings.Contains(err.Error(), "tools/list") {
			t.Errorf("Call = %v", err)
		}
		if err := client.Notify(context.Background(), "notifications/x", nil); err != nil {
			t.Errorf("Notify = %v", err)
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, server := pair(t, nil, &ConnOptions{
			MaxInFlight: 100,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				n := first[int](t, m.Params)
				// Answer in reverse order of arrival.
				time.Sleep(time.Duration(1000-n) * time.Millisecond)
				return n * n, nil
			}),
		})
		_ = server
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Go(func() {
				var got int
				if err := client.CallResult(context.Background(), "square", []int{i}, &got); err != nil || got != i*i {
					t.Errorf("square(%d) = %d, %v", i, got, err)
				}
			})
		}
		wg.Wait()
		client.mu.Lock()
		defer client.mu.Unlock()
		if len(client.pending) != 0 {
			t.Errorf("%d calls still pending", len(client.pending))
		}
	})
}

func TestIDsKeptAsSent(t *testing.T) {
	bubble(t, func(t *testing.T) {
		_, peer := withPeer(t, echo)
		for _, id := range []string{
			`"7"`, `7`, `-7`, `0`, `""`, `"a\"b"`, `"é"`,
			`9223372036854775807`, `9223372036854775808`, `-123456789012345678901234567890`, `-0`,
		} {
			peer.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"x","params":[1]}`)
			got := peer.recv()
			want := `{"jsonrpc":"2.0","id":` + id + `,"result":[1]}`
			if id == `"é"` {
				want = `{"jsonrpc":"2.0","id":"é","result":[1]}`
			}
			if got != want {
				t.Errorf("id %s: got %s, want %s", id, got, want)
			}
		}
		// An escaped id comes back with the same value.
		peer.send(`{"jsonrpc":"2.0","id":"\u0037","method":"x"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":"7","result":{}}` {
			t.Errorf("escaped id: got %s", got)
		}
	})
}

func TestRequestIDInContext(t *testing.T) {
	bubble(t, func(t *testing.T) {
		_, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			id, ok := RequestID(ctx)
			if !ok {
				return nil, errors.New("no id")
			}
			return jsontext.Value(`"` + strings.ReplaceAll(id.String(), `"`, `'`) + `"`), nil
		}))
		peer.send(`{"jsonrpc":"2.0","id":"q","method":"x"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":"q","result":"'q'"}` {
			t.Errorf("got %s", got)
		}
		if _, ok := RequestID(context.Background()); ok {
			t.Error("RequestID outside a handler")
		}
	})
}

func TestCancelSendsNotification(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, peer := withPeer(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := client.Call(ctx, "tools/call", jsontext.Value(`{"name":"slow"}`))
			errc <- err
		}()
		req := peer.recvMsg()
		if req.Method != "tools/call" || !req.IsRequest() {
			t.Fatalf("got %+v", req)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Call = %v, want context.Canceled", err)
		}
		got := peer.recv()
		want := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + req.ID.String() + `,"reason":"context canceled"}}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		// A late answer is dropped quietly.
		peer.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)

		// A deadline gives the reason "timeout".
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		start := time.Now()
		_, err := client.Call(ctx, "tools/call", nil)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 30*time.Second {
			t.Errorf("Call = %v after %v", err, time.Since(start))
		}
		req = peer.recvMsg()
		if got := peer.recv(); got != `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+req.ID.String()+`,"reason":"timeout"}}` {
			t.Errorf("got %s", got)
		}
		// A cause is passed on as the reason.
		cctx, ccancel := context.WithCancelCause(context.Background())
		go func() {
			_, err := client.Call(cctx, "x", nil)
			errc <- err
		}()
		peer.recvMsg()
		ccancel(errors.New("user pressed stop"))
		if err := <-errc; err == nil || err.Error() != "user pressed stop" {
			t.Errorf("Call = %v", err)
		}
		if got := peer.recvMsg(); got.Method != "notifications/cancelled" || !strings.Contains(string(got.Params), `"reason":"user pressed stop"`) {
			t.Errorf("got %s %s", got.Method, got.Params)
		}
		synctest.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("unexpected messages %q", p)
		}
	})
}

func TestCancelledByPeer(t *testing.T) {
	bubble(t, func(t *testing.T) {
		started := make(chan struct{})
		causes := make(chan error, 1)
		_, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method != "slow" {
				return "fast", nil
			}
			close(started)
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "too late", nil
		}))
		peer.send(`{"jsonrpc":"2.0","id":"a","method":"slow"}`)
		<-started
		// Cancelling another id, or an id of the wrong type, does nothing.
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
		synctest.Wait()
		select {
		case err := <-causes:
			t.Fatalf("handler cancelled early: %v", err)
		default:
		}
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"no longer needed"}}`)
		if err := <-causes; err == nil || !strings.Contains(err.Error(), "no longer needed") {
			t.Errorf("cause = %v", err)
		}
		synctest.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("a cancelled request was answered: %q", p)
		}
		// The id can be used again.
		peer.send(`{"jsonrpc":"2.0","id":"a","method":"fast"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":"a","result":"fast"}` {
			t.Errorf("got %s", got)
		}
	})
}

func TestCancelEndToEnd(t *testing.T) {
	bubble(t, func(t *testing.T) {
		started := make(chan struct{})
		var cause atomic.Value
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			close(started)
			<-ctx.Done()
			cause.Store(context.Cause(ctx).Error())
			return nil, nil
		}))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() {
			_, err := client.Call(ctx, "slow", nil)
			errc <- err
		}()
		<-started
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Call = %v", err)
		}
		// The handler holds the reading turn until the guard passes it.
		time.Sleep(2 * turnTick)
		synctest.Wait()
		if c, _ := cause.Load().(string); c != "cancelled by the peer: context canceled" {
			t.Errorf("server handler cause = %q", c)
		}
	})
}

func TestMaxInFlight(t *testing.T) {
	for _, limit := range []int{1, 3, 64} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				var now, peak atomic.Int32
				client, _ := pair(t, nil, &ConnOptions{
					MaxInFlight: limit,
					Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
						raise(&peak, now.Add(1))
						time.Sleep(time.Second)
						now.Add(-1)
						return nil, nil
					}),
				})
				start := time.Now()
				var wg sync.WaitGroup
				const calls = 100
				for range calls {
					wg.Go(func() {
						if _, err := client.Call(context.Background(), "work", nil); err != nil {
							t.Error(err)
						}
					})
				}
				wg.Wait()
				if p := peak.Load(); p != int32(min(limit, calls)) {
					t.Errorf("peak handlers in flight = %d, want %d", p, limit)
				}
				// The first handler holds the reading turn until the guard
				// passes it on (up to two ticks); the rest start at once.
				batches := (calls + limit - 1) / limit
				if d := time.Since(start) - time.Duration(batches)*time.Second; d < 0 || d > 2*turnTick {
					t.Errorf("took %v, want %d batches of 1s", d, batches)
				}
			})
		})
	}
}

// raise makes peak n if n is higher: by compare-and-swap, since with a
// load then a store a handler preempted between the two would lower it.
func raise(peak *atomic.Int32, n int32) {
	for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
	}
}

func TestDefaultMaxInFlight(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var now, peak atomic.Int32
		release := make(chan struct{})
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			raise(&peak, now.Add(1))
			<-release
			now.Add(-1)
			return nil, nil
		}))
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() { client.Call(context.Background(), "work", nil) })
		}
		time.Sleep(2 * turnTick) // for the reading turn to pass on
		synctest.Wait()
		if p := peak.Load(); p != 64 {
			t.Errorf("peak = %d, want the default 64", p)
		}
		close(release)
		wg.Wait()
	})
}

// TestNestedCall has handlers that call the peer back while every slot is
// taken: the calls must not deadlock the connection.
func TestNestedCall(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var client, server *Conn
		var serverBusy, serverPeak atomic.Int32
		client, server = pair(t, &ConnOptions{
			MaxInFlight: 1,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				switch m.Method {
				case "sampling/createMessage":
					// The client's handler calls the server back in turn.
					var s string
					if err := client.CallResult(ctx, "ping", nil, &s); err != nil {
						return nil, err
					}
					return "sampled after " + s, nil
				}
				return nil, NewError(CodeMethodNotFound, "no")
			}),
		}, &ConnOptions{
			MaxInFlight: 1,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				n := serverBusy.Add(1)
				defer serverBusy.Add(-1)
				if n > serverPeak.Load() {
					serverPeak.Store(n)
				}
				switch m.Method {
				case "ping":
					return "pong", nil
				case "tools/call":
					serverBusy.Add(-1)
					var s string
					err := server.CallResult(ctx, "sampling/createMessage", nil, &s)
					serverBusy.Add(1)
					return s, err
				}
				return nil, NewError(CodeMethodNotFound, "no")
			}),
		})
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				var s string
				if err := client.CallResult(context.Background(), "tools/call", nil, &s); err != nil || s != "sampled after pong" {
					t.Errorf("tools/call = %q, %v", s, err)
				}
			})
		}
		wg.Wait()
		if p := serverPeak.Load(); p != 1 {
			t.Errorf("server ran %d handlers at once outside calls, want 1", p)
		}
	})
}

// TestConcurrentNestedCalls has one handler make several calls at once,
// with MaxInFlight 1: its slot is given back once, and taken back once.
func TestConcurrentNestedCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var server *Conn
		var busy, peak atomic.Int32
		client, server := pair(t, echo, &ConnOptions{
			MaxInFlight: 1,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				raise(&peak, busy.Add(1))
				defer busy.Add(-1)
				if m.Method != "fanout" {
					return "leaf", nil
				}
				busy.Add(-1)
				var wg sync.WaitGroup
				errs := make([]error, 4)
				for i := range errs {
					wg.Go(func() {
						_, errs[i] = server.Call(ctx, "echo", []int{i})
					})
				}
				wg.Wait()
				busy.Add(1)
				return nil, errors.Join(errs...)
			}),
		})
		// Alone: nothing else would free a slot for the second call.
		if _, err := client.Call(context.Background(), "fanout", nil); err != nil {
			t.Fatalf("fanout: %v", err)
		}
		// Among other requests.
		var wg sync.WaitGroup
		for i := range 6 {
			wg.Go(func() {
				method := "leaf"
				if i%2 == 0 {
					method = "fanout"
				}
				if _, err := client.Call(context.Background(), method, nil); err != nil {
					t.Errorf("%s: %v", method, err)
				}
			})
		}
		wg.Wait()
		if p := peak.Load(); p != 1 {
			t.Errorf("%d handlers ran at once outside calls, want 1", p)
		}
		if n := len(server.sem); n != 0 {
			t.Errorf("%d slots still taken after every handler returned", n)
		}
	})
}

// TestNestedCallsKeepBound checks that a handler with several calls in
// progress gives back one slot, not one per call.
func TestNestedCallsKeepBound(t *testing.T) {
	bubble(t, func(t *testing.T) {
		answer := make(chan struct{})
		leafRelease := make(chan struct{})
		var leaves, peak atomic.Int32
		var server *Conn
		client, server := pair(t, handle(func(ctx context.Context, m *Message) (any, error) {
			<-answer
			return nil, nil
		}), &ConnOptions{
			MaxInFlight: 1,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				if m.Method == "leaf" {
					raise(&peak, leaves.Add(1))
					<-leafRelease
					leaves.Add(-1)
					return nil, nil
				}
				var wg sync.WaitGroup
				for range 3 {
					wg.Go(func() { server.Call(ctx, "ask", nil) })
				}
				wg.Wait()
				return nil, nil
			}),
		})
		var wg sync.WaitGroup
		wg.Go(func() { client.Call(context.Background(), "fanout", nil) })
		synctest.Wait()
		for range 3 {
			wg.Go(func() { client.Call(context.Background(), "leaf", nil) })
		}
		synctest.Wait()
		if p := peak.Load(); p != 1 {
			t.Errorf("%d handlers ran at once with MaxInFlight 1", p)
		}
		close(leafRelease)
		close(answer)
		wg.Wait()
	})
}

// TestCallAfterHandlerReturned makes a call with the context of a handler
// that already returned, from a goroutine it left behind.
func TestCallAfterHandlerReturned(t *testing.T) {
	bubble(t, func(t *testing.T) {
		leftover := make(chan context.Context, 1)
		var server *Conn
		client, server := pair(t, echo, &ConnOptions{
			MaxInFlight: 1,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				if m.Method == "leave" {
					leftover <- ctx
				}
				return nil, nil
			}),
		})
		if _, err := client.Call(context.Background(), "leave", nil); err != nil {
			t.Fatal(err)
		}
		ctx := <-leftover
		synctest.Wait()
		// The handler's context is done: the call fails at once.
		if _, err := server.Call(ctx, "echo", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Call with a finished handler's context = %v", err)
		}
		// With the cancellation removed it goes through, and touches no slot.
		if _, err := server.Call(context.WithoutCancel(ctx), "echo", nil); err != nil {
			t.Errorf("Call = %v", err)
		}
		if n := len(server.sem); n != 0 {
			t.Errorf("%d slots taken", n)
		}
		if _, err := client.Call(context.Background(), "other", nil); err != nil {
			t.Errorf("Call = %v", err)
		}
	})
}

func TestPanic(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var notified atomic.Int32
		client, server := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			switch m.Method {
			case "boom":
				panic("kaboom")
			case "nilpanic":
				panic(nil)
			case "notifications/boom":
				notified.Add(1)
				panic(errors.New("notification kaboom"))
			}
			return "ok", nil
		}))
		for _, method := range []string{"boom", "nilpanic"} {
			_, err := client.Call(context.Background(), method, nil)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeInternalError || !strings.Contains(e.Message, "panicked") {
				t.Errorf("%s: Call = %v", method, err)
			}
			if method == "boom" && !strings.Contains(e.Message, "kaboom") {
				t.Errorf("the panic value is not reported: %q", e.Message)
			}
		}
		client.Notify(context.Background(), "notifications/boom", nil)
		client.Notify(context.Background(), "notifications/boom", nil)
		var s string
		if err := client.CallResult(context.Background(), "fine", nil, &s); err != nil || s != "ok" {
			t.Errorf("after the panics: %q, %v", s, err)
		}
		if n := notified.Load(); n != 2 {
			t.Errorf("notification handler ran %d times", n)
		}
		if server.Err() != nil {
			t.Errorf("server closed: %v", server.Err())
		}
	})
}

func TestNotificationOrder(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []int
		done := make(chan struct{})
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "notifications/last" {
				close(done)
				return nil, nil
			}
			n := first[int](t, m.Params)
			if n%7 == 0 {
				time.Sleep(time.Millisecond) // a slow one must not be overtaken
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
			return nil, nil
		}))
		const count = 500
		for i := range count {
			if err := client.Notify(context.Background(), "notifications/n", []int{i}); err != nil {
				t.Fatal(err)
			}
		}
		client.Notify(context.Background(), "notifications/last", nil)
		<-done
		mu.Lock()
		defer mu.Unlock()
		if len(got) != count {
			t.Fatalf("got %d notifications, want %d", len(got), count)
		}
		for i, n := range got {
			if n != i {
				t.Fatalf("notification %d handled in position %d", n, i)
			}
		}
	})
}

func TestCloseFailsPendingCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		started := make(chan struct{}, 3)
		var serverCause atomic.Value
		client, server := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			serverCause.Store(context.Cause(ctx).Error())
			return nil, nil
		}))
		errs := make(chan error, 3)
		for range 3 {
			go func() {
				_, err := client.Call(context.Background(), "slow", nil)
				errs <- err
			}()
		}
		for range 3 {
			<-started
		}
		if err := client.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		for range 3 {
			err := <-errs
			if !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "closed by this side") {
				t.Errorf("pending Call = %v", err)
			}
		}
		select {
		case <-client.Done():
		default:
			t.Error("Done not closed")
		}
		if err := client.Err(); !errors.Is(err, ErrClosed) || err.Error() != "jsonrpc: connection closed: closed by this side" {
			t.Errorf("Err = %v", err)
		}
		if err := client.Wait(); !errors.Is(err, ErrClosed) {
			t.Errorf("Wait = %v", err)
		}
		// Calls and notifications after the close fail the same way.
		if _, err := client.Call(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Call after Close = %v", err)
		}
		if err := client.Notify(context.Background(), "x", nil); !errors.Is(err, ErrClosed) {
			t.Errorf("Notify after Close = %v", err)
		}
		client.Close() // again: no effect
		// The server saw the end of its input and cancelled its handlers.
		<-server.Done()
		server.Wait()
		if err := server.Err(); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "the peer closed the connection") {
			t.Errorf("server Err = %v", err)
		}
		if c, _ := serverCause.Load().(string); !strings.Contains(c, "the peer closed the connection") {
			t.Errorf("server handler cause = %q", c)
		}
	})
}

func TestCloseCancelsHandlers(t *testing.T) {
	bubble(t, func(t *testing.T) {
		started := make(chan struct{})
		causes := make(chan error, 1)
		server, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			close(started)
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return nil, nil
		}))
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
		<-started
		server.Close()
		if err := <-causes; !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "closed by this side") {
			t.Errorf("handler cause = %v", err)
		}
		server.Wait()
		// The peer sees the end of the stream.
		if _, err := peer.in.pop(peer.stop); err != io.EOF {
			t.Errorf("peer read %v, want EOF", err)
		}
	})
}

func TestContextClosesConn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, _ := newRawPeer(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		c := newConn(ctx, s, nil)
		cancel(errors.New("shutting down"))
		<-c.Done()
		if err := c.Wait(); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("Err = %v", err)
		}
	})
}

func TestPeerEOF(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, peer := withPeer(t, nil)
		errc := make(chan error)
		go func() {
			_, err := client.Call(context.Background(), "x", nil)
			errc <- err
		}()
		peer.recv()
		peer.closeWrite()
		err := <-errc
		if !errors.Is(err, ErrClosed) || err.Error() != "jsonrpc: connection closed: the peer closed the connection" {
			t.Errorf("Call = %v", err)
		}
		<-client.Done()
	})
}

// errStream is a stream whose Read fails.
type errStream struct {
	err error
}

func (s *errStream) Read() (*Message, error)               { return nil, s.err }
func (s *errStream) Write(context.Context, *Message) error { return nil }
func (s *errStream) Close() error                          { return nil }

func TestStreamError(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c := newConn(context.Background(), &errStream{err: errors.New("disk unplugged")}, &ConnOptions{DrainTimeout: time.Hour})
		start := time.Now()
		if err := c.Wait(); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), "disk unplugged") {
			t.Errorf("Err = %v", err)
		}
		if time.Since(start) != 0 {
			t.Errorf("a broken stream waited %v to drain", time.Since(start))
		}
	})
}

func TestDrainTimeout(t *testing.T) {
	bubble(t, func(t *testing.T) {
		server, peer := withPeer(t, &ConnOptions{
			DrainTimeout: 5 * time.Second,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				d := time.Duration(first[int](t, m.Params))
				select {
				case <-time.After(d * time.Second):
					return "done", nil
				case <-ctx.Done():
					return nil, context.Cause(ctx)
				}
			}),
		})
		start := time.Now()
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"work","params":[2]}`)
		peer.send(`{"jsonrpc":"2.0","id":2,"method":"work","params":[4]}`)
		peer.closeWrite()
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":1,"result":"done"}` {
			t.Errorf("got %s", got)
		}
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":2,"result":"done"}` {
			t.Errorf("got %s", got)
		}
		<-server.Done()
		if d := time.Since(start); d < 4*time.Second || d > 4*time.Second+2*turnTick {
			t.Errorf("closed after %v, want as soon as the handlers finished (4s)", d)
		}
		if err := server.Err(); !strings.Contains(err.Error(), "the peer closed the connection") {
			t.Errorf("Err = %v", err)
		}
	})
	bubble(t, func(t *testing.T) {
		// A handler that takes longer than DrainTimeout is cancelled.
		causes := make(chan error, 1)
		server, peer := withPeer(t, &ConnOptions{
			DrainTimeout: 5 * time.Second,
			Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
				<-ctx.Done()
				causes <- context.Cause(ctx)
				return "late", nil
			}),
		})
		start := time.Now()
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"forever"}`)
		peer.closeWrite()
		<-server.Done()
		// The end of input is seen once the handler's reading turn passed.
		if d := time.Since(start); d < 5*time.Second || d > 5*time.Second+2*turnTick {
			t.Errorf("closed after %v, want 5s", d)
		}
		if err := <-causes; !errors.Is(err, ErrClosed) {
			t.Errorf("cause = %v", err)
		}
		server.Wait()
	})
	bubble(t, func(t *testing.T) {
		// Without DrainTimeout, EOF cancels handlers at once.
		causes := make(chan error, 1)
		server, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "late", nil
		}))
		start := time.Now()
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"forever"}`)
		peer.closeWrite()
		// At once, but for the handler's hold on the reading turn.
		if err := <-causes; !errors.Is(err, ErrClosed) || time.Since(start) > 2*turnTick {
			t.Errorf("cause = %v after %v", err, time.Since(start))
		}
		server.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("answered after close: %q", p)
		}
	})
}

func TestReplyToInvalid(t *testing.T) {
	cases := []struct {
		in, reply string
	}{
		{`{"jsonrpc":"2.0","id":5,"method":7}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"\"method\" must be a string"}}`},
		{`{"jsonrpc":"2.0","id":"x","method":"m","params":"p"}`, `{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"\"params\" must be an object or an array"}}`},
		{`{"jsonrpc":"1.0","id":6,"method":"m"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"\"jsonrpc\" must be \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1,"a":2}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32700,"message":"duplicate member name \"a\" at offset 53"}}`},
		{`{"jsonrpc":"2.0","id":null,"method":"m"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a request id must not be null"}}`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"m"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"id 1.5 is not an integer"}}`},
		{`xyz`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"invalid JSON at offset 0: unexpected character 'x'"}}`},
		{`[{"jsonrpc":"2.0","id":1,"method":"m"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported"}}`},
	}
	bubble(t, func(t *testing.T) {
		_, peer := withPeer(t, &ConnOptions{ReplyToInvalid: true, Handler: echo.Handler})
		for _, tc := range cases {
			peer.send(tc.in)
			if got := peer.recv(); got != tc.reply {
				t.Errorf("%s:\ngot  %s\nwant %s", tc.in, got, tc.reply)
			}
		}
		// Still working.
		peer.send(`{"jsonrpc":"2.0","id":8,"method":"m","params":[8]}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":8,"result":[8]}` {
			t.Errorf("got %s", got)
		}
	})
	bubble(t, func(t *testing.T) {
		// Without ReplyToInvalid, invalid messages are only logged.
		_, peer := withPeer(t, echo)
		for _, tc := range cases {
			peer.send(tc.in)
		}
		peer.send(`{"jsonrpc":"2.0","id":8,"method":"m","params":[8]}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":8,"result":[8]}` {
			t.Errorf("got %s", got)
		}
		synctest.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("unexpected replies %q", p)
		}
	})
}

func TestMalformedResponseFailsCall(t *testing.T) {
	for _, tc := range []struct {
		name, body, msg string
	}{
		{"duplicate in result", `"result":{"a":1,"a":2}`, `duplicate member name "a"`},
		{"result and error", `"result":{},"error":{"code":1,"message":"x"}`, "both result and error"},
		{"invalid UTF-8", "\"result\":\"\xff\"", "invalid UTF-8"},
		{"too deep", `"result":` + strings.Repeat("[", 200) + strings.Repeat("]", 200), "nested deeper"},
		{"truncated", `"result":{"a":`, "unexpected end of input"},
		{"bad error object", `"error":{"code":"x"}`, "error code must be an integer"},
		{"trailing data", `"result":{}} {`, "data after the message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				client, peer := withPeer(t, nil)
				errc := make(chan error)
				go func() {
					_, err := client.Call(context.Background(), "x", nil)
					errc <- err
				}()
				req := peer.recvMsg()
				line := `{"jsonrpc":"2.0","id":` + req.ID.String() + `,` + tc.body
				if !strings.HasSuffix(line, "{") && !strings.HasSuffix(line, `:`) {
					line += "}"
				}
				peer.send(line)
				err := <-errc
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Message, "invalid response") || !strings.Contains(e.Message, tc.msg) {
					t.Errorf("Call = %v", err)
				}
				// The connection goes on.
				go client.Call(context.Background(), "y", nil)
				if m := peer.recvMsg(); m.Method != "y" {
					t.Errorf("got %+v", m)
				}
			})
		})
	}
}

func TestTooLargeResponseFailsCall(t *testing.T) {
	bubble(t, func(t *testing.T) {
		s, peer := newRawPeer(t)
		s.lim = Limits{MaxSize: 100}
		client := newConn(context.Background(), s, nil)
		defer client.Close()
		errc := make(chan error)
		go func() {
			_, err := client.Call(context.Background(), "x", nil)
			errc <- err
		}()
		req := peer.recvMsg()
		peer.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":"` + strings.Repeat("x", 200) + `"}`)
		if err := <-errc; err == nil || !strings.Contains(err.Error(), "exceeds the limit of 100 bytes") {
			t.Errorf("Call = %v", err)
		}
	})
}

// TestInvalidRequestWithPendingID sends a malformed request whose id
// happens to be the id of one of our own pending calls (each side numbers
// its requests from 1): it is the peer's request, not our answer.
func TestInvalidRequestWithPendingID(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, peer := withPeer(t, &ConnOptions{ReplyToInvalid: true})
		type result struct {
			m   *Message
			err error
		}
		res := make(chan result, 1)
		go func() {
			m, err := client.Call(context.Background(), "x", nil)
			res <- result{m, err}
		}()
		req := peer.recvMsg()
		id := req.ID.String()
		peer.send(`{"jsonrpc":"2.0","id":` + id + `,"method":42}`)
		if got := peer.recvMsg(); got.ID != req.ID || got.Error == nil || got.Error.Code != CodeInvalidRequest {
			t.Errorf("the invalid request got %+v", got)
		}
		synctest.Wait()
		select {
		case r := <-res:
			t.Fatalf("the peer's invalid request ended our call: %v", r.err)
		default:
		}
		peer.send(`{"jsonrpc":"2.0","id":` + id + `,"result":"answer"}`)
		if r := <-res; r.err != nil || string(r.m.Result) != `"answer"` {
			t.Errorf("Call = %v, %v", r.m, r.err)
		}
	})
}

func TestDuplicateRequestID(t *testing.T) {
	bubble(t, func(t *testing.T) {
		release := make(chan struct{})
		_, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "slow" {
				<-release
			}
			return m.Method, nil
		}))
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"again"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"request id 1 is already in use"}}` {
			t.Errorf("got %s", got)
		}
		// The same digits as a string are another id.
		peer.send(`{"jsonrpc":"2.0","id":"1","method":"fast"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":"1","result":"fast"}` {
			t.Errorf("got %s", got)
		}
		close(release)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":1,"result":"slow"}` {
			t.Errorf("got %s", got)
		}
		synctest.Wait()
		// Once answered, the id is free again.
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"fast"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":1,"result":"fast"}` {
			t.Errorf("got %s", got)
		}
	})
}

func TestResponsesIgnored(t *testing.T) {
	bubble(t, func(t *testing.T) {
		_, peer := withPeer(t, &ConnOptions{ReplyToInvalid: true, Handler: echo.Handler})
		peer.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
		peer.send(`{"jsonrpc":"2.0","id":"99","error":{"code":1,"message":"x"}}`)
		peer.send(`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}`)
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":1,"result":[1]}` {
			t.Errorf("got %s", got)
		}
		synctest.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("responses were answered: %q", p)
		}
	})
}

func TestHandlerResults(t *testing.T) {
	bubble(t, func(t *testing.T) {
		_, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			switch m.Method {
			case "raw":
				return jsontext.Value(`{"x": 1}`), nil
			case "bytes":
				return []byte(`[1]`), nil
			case "struct":
				return struct {
					A int `json:"a"`
				}{1}, nil
			case "nil":
				return nil, nil
			case "unencodable":
				return make(chan int), nil
			}
			return nil, nil
		}))
		for _, tc := range []struct{ method, reply string }{
			{"raw", `{"jsonrpc":"2.0","id":1,"result":{"x": 1}}`},
			{"bytes", `{"jsonrpc":"2.0","id":1,"result":[1]}`},
			{"struct", `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`},
			{"nil", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		} {
			peer.send(`{"jsonrpc":"2.0","id":1,"method":"` + tc.method + `"}`)
			if got := peer.recv(); got != tc.reply {
				t.Errorf("%s: got %s, want %s", tc.method, got, tc.reply)
			}
		}
		peer.send(`{"jsonrpc":"2.0","id":1,"method":"unencodable"}`)
		m := peer.recvMsg()
		if m.Error == nil || m.Error.Code != CodeInternalError || !strings.Contains(m.Error.Message, "cannot encode") {
			t.Errorf("unencodable result: got %+v", m)
		}
	})
}

func TestWriteRaw(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c, peer := withPeer(t, nil)
		if err := c.write(context.Background(), &Message{Method: "notifications/x", Params: jsontext.Value(`{}`)}); err != nil {
			t.Fatal(err)
		}
		if got := peer.recv(); got != `{"jsonrpc":"2.0","method":"notifications/x","params":{}}` {
			t.Errorf("got %s", got)
		}
		if err := c.Notify(context.Background(), "n", jsontext.Value(`[1]`)); err != nil {
			t.Fatal(err)
		}
		if got := peer.recv(); got != `{"jsonrpc":"2.0","method":"n","params":[1]}` {
			t.Errorf("got %s", got)
		}
	})
}

func TestCallWriteFails(t *testing.T) {
	bubble(t, func(t *testing.T) {
		c, _ := withPeer(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.Call(ctx, "x", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Call = %v", err)
		}
		if _, err := c.Call(context.Background(), "x", make(chan int)); err == nil || !strings.Contains(err.Error(), "cannot encode") {
			t.Errorf("Call = %v", err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if len(c.pending) != 0 {
			t.Errorf("failed calls left %d pending entries", len(c.pending))
		}
	})
}

// first decodes the first element of an array of params.
func first[T any](t *testing.T, params []byte) T {
	var v []T
	if err := json.Unmarshal(params, &v); err != nil || len(v) == 0 {
		t.Errorf("params %s: %v", params, err)
		var zero T
		return zero
	}
	return v[0]
}

func TestCallOnID(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, peer := withPeer(t, nil)
		var hooked ID
		o := &jsonrpcapi.CallOptions{OnID: func(id int64) {
			// Called before the request is sent.
			if p := peer.pending(); len(p) != 0 {
				t.Errorf("request sent before the hook: %q", p)
			}
			hooked = Int64ID(id)
		}}
		go client.callWith(context.Background(), "subscriptions/listen", nil, o)
		req := peer.recvMsg()
		if !hooked.IsValid() || hooked != req.ID {
			t.Errorf("hook saw id %v, request has %v", hooked, req.ID)
		}
		peer.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"result":{}}`)
	})
}

// A notification handler may call the peer: the answer reaches it even
// though it arrives on the connection whose notifications it is handling.
func TestNotificationHandlerCalls(t *testing.T) {
	bubble(t, func(t *testing.T) {
		got := make(chan string, 1)
		var server *Conn
		client, srv := pair(t, echoWith("pong"), handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "notifications/hello" {
				r, err := server.Call(ctx, "ping", nil)
				if err != nil {
					got <- err.Error()
				} else {
					got <- string(r.Result)
				}
			}
			return nil, nil
		}))
		server = srv
		client.Notify(context.Background(), "notifications/hello", nil)
		select {
		case v := <-got:
			if v != `"pong"` {
				t.Errorf("got %s", v)
			}
		case <-time.After(time.Minute):
			t.Fatal("the notification handler's call never returned")
		}
	})
}

func echoWith(v string) *ConnOptions {
	return handle(func(ctx context.Context, m *Message) (any, error) { return v, nil })
}

// A request waiting for a slot can still be cancelled: with one slot
// taken by a request that ends only when cancelled, a second such request
// queues, and cancelling both frees the connection.
func TestCancelQueuedRequest(t *testing.T) {
	bubble(t, func(t *testing.T) {
		var started atomic.Int32
		opts := handle(func(ctx context.Context, m *Message) (any, error) {
			if m.Method == "block" {
				started.Add(1)
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return "ok", nil
		})
		opts.MaxInFlight = 1
		client, _ := pair(t, nil, opts)
		ctx1, cancel1 := context.WithCancel(context.Background())
		ctx2, cancel2 := context.WithCancel(context.Background())
		errs := make(chan error, 2)
		go func() { _, err := client.Call(ctx1, "block", nil); errs <- err }()
		synctest.Wait()
		go func() { _, err := client.Call(ctx2, "block", nil); errs <- err }()
		synctest.Wait()
		if n := started.Load(); n != 1 {
			t.Fatalf("%d handlers started, want 1", n)
		}
		cancel2() // the queued one
		synctest.Wait()
		cancel1()
		for range 2 {
			if err := <-errs; !errors.Is(err, context.Canceled) {
				t.Errorf("Call = %v", err)
			}
		}
		if _, err := client.Call(context.Background(), "other", nil); err != nil {
			t.Errorf("after the cancellations: %v", err)
		}
		synctest.Wait()
		if n := started.Load(); n != 1 {
			t.Errorf("the cancelled queued request ran (%d started)", n)
		}
	})
}

func TestCallWithTimeout(t *testing.T) {
	bubble(t, func(t *testing.T) {
		causes := make(chan string, 1)
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			switch {
			case m.IsNotification():
				return nil, nil
			case m.Method == "fast":
				return "ok", nil
			}
			<-ctx.Done()
			causes <- context.Cause(ctx).Error()
			return nil, nil
		}))
		ctx := context.Background()
		errSlow := fmt.Errorf("too slow: %w", context.DeadlineExceeded)
		for i := range 3 { // the connection reuses its timers
			start := time.Now()
			if _, err := client.callWith(ctx, "slow", nil, &jsonrpcapi.CallOptions{Timeout: time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }}); err != errSlow || time.Since(start) != time.Second {
				t.Errorf("call %d: %v after %v, want the timeout error after 1s", i, err, time.Since(start))
			}
			if c := <-causes; c != "cancelled by the peer: timeout" {
				t.Errorf("call %d: server handler cause = %q", i, c)
			}
			r, err := client.callWith(ctx, "fast", nil, &jsonrpcapi.CallOptions{Timeout: time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }})
			if err != nil || string(r.Result) != `"ok"` {
				t.Errorf("call %d: fast call = %v, %v", i, r, err)
			}
			// A timer stopped after an answer must not fire into a later call.
			time.Sleep(2 * time.Second)
		}
	})
}

// Calls with different deadlines share the connection's one timer: each
// fails at its own deadline, whatever the order they were made in.
func TestCallWithTimeoutDeadlines(t *testing.T) {
	bubble(t, func(t *testing.T) {
		client, _ := pair(t, nil, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.IsNotification() {
				return nil, nil
			}
			if m.Method == "answer-at-4s" {
				time.Sleep(4 * time.Second)
				return "ok", nil
			}
			<-ctx.Done()
			return nil, nil
		}))
		ctx := context.Background()
		errSlow := fmt.Errorf("too slow: %w", context.DeadlineExceeded)
		start := time.Now()
		var wg sync.WaitGroup
		for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
			wg.Go(func() {
				_, err := client.callWith(ctx, "block", nil, &jsonrpcapi.CallOptions{Timeout: d, TimeoutErr: func(string, time.Duration) error { return errSlow }})
				if err != errSlow || time.Since(start) != d {
					t.Errorf("%v call: %v after %v", d, err, time.Since(start))
				}
			})
		}
		wg.Go(func() {
			r, err := client.callWith(ctx, "answer-at-4s", nil, &jsonrpcapi.CallOptions{Timeout: 5 * time.Second, TimeoutErr: func(string, time.Duration) error { return errSlow }})
			// The server may start it late by its reading turn's guard.
			late := time.Since(start) - 4*time.Second
			if err != nil || string(r.Result) != `"ok"` || late < 0 || late > 2*turnTick {
				t.Errorf("answered call: %v %v after %v", r, err, time.Since(start))
			}
		})
		wg.Wait()
		// Long after, a call with a short deadline still gets it exactly.
		time.Sleep(time.Minute)
		start = time.Now()
		if _, err := client.callWith(ctx, "block", nil, &jsonrpcapi.CallOptions{Timeout: 10 * time.Millisecond, TimeoutErr: func(string, time.Duration) error { return errSlow }}); err != errSlow || time.Since(start) != 10*time.Millisecond {
			t.Errorf("late call: %v after %v", err, time.Since(start))
		}
	})
}

// newConn is NewConn with MCP's cancellation notification, which the
// tests here expect unless they set another.
func newConn(ctx context.Context, s Stream, opts *ConnOptions) *Conn {
	o := ConnOptions{}
	if opts != nil {
		o = *opts
	}
	if o.CancelMethod == "" {
		o.CancelMethod = "notifications/cancelled"
	}
	return NewConn(ctx, s, &o)
}

// Without a CancelMethod, the Conn knows no cancellation: an abandoned
// call tells the peer nothing, and "notifications/cancelled" is only a
// notification.
func TestNoCancelMethod(t *testing.T) {
	bubble(t, func(t *testing.T) {
		notes := make(chan string, 1)
		cancelled, release := make(chan bool, 1), make(chan struct{})
		s, peer := newRawPeer(t)
		c := NewConn(context.Background(), s, handle(func(ctx context.Context, m *Message) (any, error) {
			if m.IsNotification() {
				notes <- m.Method
				return nil, nil
			}
			select {
			case <-ctx.Done():
				cancelled <- true
			case <-release:
			}
			return "done", nil
		}))
		defer func() {
			c.Close()
			c.Wait()
		}()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, "x", nil)
			errc <- err
		}()
		peer.recvMsg()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("Call = %v", err)
		}
		synctest.Wait()
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("sent on cancel: %q", p)
		}
		// A request, then a notification naming it: the handler sees the
		// notification and the request goes on.
		peer.send(`{"jsonrpc":"2.0","id":7,"method":"wait"}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
		if got := <-notes; got != "notifications/cancelled" {
			t.Errorf("handler saw %q", got)
		}
		synctest.Wait()
		if len(cancelled) > 0 {
			t.Error("the notification cancelled the request")
		}
		close(release)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":7,"result":"done"}` {
			t.Errorf("answer %s", got)
		}
	})
}
