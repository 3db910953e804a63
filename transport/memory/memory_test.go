package memory

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json/jsontext"

	// Linked as in every MCP program: it has the decoder intern MCP's
	// method names ("tools/call" below), which BenchmarkMemoryRoundTrip's
	// allocation count assumes.
	_ "github.com/ferrymcp/ferry/protocol"
)

// checkGoroutines records how many goroutines run now and returns a
// function that fails the test if, after a grace period, more remain.
func checkGoroutines(t testing.TB) func() {
	t.Helper()
	base := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for d := time.Millisecond; ; d = min(2*d, 50*time.Millisecond) {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Fatalf("%d goroutines left running, %d before:\n%s", n, base, buf)
			}
			time.Sleep(d)
		}
	}
}

var echo = jsonrpc2.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
	if m.Method == "fail" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "bad params")
	}
	return m.Params, nil
})

func TestCallAndResponse(t *testing.T) {
	defer checkGoroutines(t)()
	a, b := NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{Handler: echo})
	client := jsonrpc2.NewConn(ctx, b, nil)
	tests := []struct {
		method, params, want string
		code                 int64
	}{
		{"echo", `{"a":[1,2,{"b":null}]}`, `{"a":[1,2,{"b":null}]}`, 0},
		{"echo", `{"text":"line\nbreak é"}`, `{"text":"line\nbreak é"}`, 0},
		{"fail", `{}`, "", jsonrpc.CodeInvalidParams},
	}
	for _, tt := range tests {
		r, err := client.Call(ctx, tt.method, jsontext.Value(tt.params))
		if tt.code != 0 {
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Errorf("%s: %v, want code %d", tt.method, err, tt.code)
			}
			continue
		}
		if err != nil || string(r.Result) != tt.want {
			t.Errorf("%s: %v %s, want %s", tt.method, err, r.Result, tt.want)
		}
	}
	// Concurrent calls all get their own answer.
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			p := `{"i":` + strconv.Itoa(i) + `}`
			r, err := client.Call(ctx, "echo", jsontext.Value(p))
			if err != nil || string(r.Result) != p {
				t.Errorf("call %d: %v %s", i, err, r.Result)
			}
		})
	}
	wg.Wait()
	client.Close()
	server.Close()
}

func TestNotificationOrder(t *testing.T) {
	defer checkGoroutines(t)()
	a, b := NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	var got []string
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{
		Handler: jsonrpc2.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
			if m.IsNotification() {
				got = append(got, string(m.Params)) // notifications run one at a time
			}
			return nil, nil
		}),
	})
	client := jsonrpc2.NewConn(ctx, b, nil)
	defer server.Close()
	defer client.Close()
	const n = 500 // more than the queue holds
	for i := range n {
		if err := client.Notify(ctx, "note", jsontext.Value("["+strconv.Itoa(i)+"]")); err != nil {
			t.Fatal(err)
		}
	}
	// The server handles a request after the notifications before it.
	if _, err := client.Call(ctx, "barrier", nil); err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("got %d notifications, want %d", len(got), n)
	}
	for i, p := range got {
		if p != "["+strconv.Itoa(i)+"]" {
			t.Fatalf("notification %d: %s", i, p)
		}
	}
}

func TestCloseSemantics(t *testing.T) {
	ctx := context.Background()
	a, b := NewPipe(jsonrpc.Limits{})
	if err := a.Write(ctx, &jsonrpc.Message{Method: "last"}); err != nil {
		t.Fatal(err)
	}
	blocked := make(chan error, 1)
	go func() {
		_, err := a.Read()
		blocked <- err
	}()
	a.Close()
	if err := <-blocked; err != jsonrpc.ErrClosed {
		t.Errorf("blocked Read on the closed end: %v, want jsonrpc.ErrClosed", err)
	}
	if _, err := a.Read(); err != jsonrpc.ErrClosed {
		t.Errorf("Read on the closed end: %v, want jsonrpc.ErrClosed", err)
	}
	if err := a.Write(ctx, &jsonrpc.Message{Method: "m"}); err != jsonrpc.ErrClosed {
		t.Errorf("Write on the closed end: %v, want jsonrpc.ErrClosed", err)
	}
	// The peer reads what was sent before the close, then io.EOF.
	if m, err := b.Read(); err != nil || m.Method != "last" {
		t.Errorf("peer Read: %v, %v; want the message sent before Close", m, err)
	}
	if _, err := b.Read(); err != io.EOF {
		t.Errorf("peer Read: %v, want io.EOF", err)
	}
	if err := b.Write(ctx, &jsonrpc.Message{Method: "m"}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("peer Write: %v, want io.ErrClosedPipe", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := b.Read(); err != io.EOF {
		t.Errorf("peer Read after its own Close: %v, want io.EOF (the peer closed first)", err)
	}
}

func TestConnSeesPeerClose(t *testing.T) {
	defer checkGoroutines(t)()
	a, b := NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	server := jsonrpc2.NewConn(ctx, a, &jsonrpc2.ConnOptions{
		Handler: jsonrpc2.HandlerFunc(func(ctx context.Context, m *jsonrpc.Message) (any, error) {
			close(started)
			<-release
			return nil, nil
		}),
	})
	client := jsonrpc2.NewConn(ctx, b, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := client.Call(ctx, "slow", nil)
		errc <- err
	}()
	// The pending call fails once the server's side goes away.
	<-started
	server.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, jsonrpc.ErrClosed) {
			t.Errorf("pending call: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("pending call still waiting after the peer closed")
	}
	<-client.Done()
	close(release)
	server.Wait()
	client.Wait()
}

func TestWriteBlocksWhenFull(t *testing.T) {
	a, b := NewPipe(jsonrpc.Limits{})
	defer a.Close()
	ctx := context.Background()
	for i := range queueLen {
		if err := a.Write(ctx, &jsonrpc.Message{Method: "m"}); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if err := a.Write(tctx, &jsonrpc.Message{Method: "m"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("write to a full queue: %v, want the context's error", err)
	}
	// A blocked write returns when the pipe closes.
	errc := make(chan error, 1)
	go func() { errc <- a.Write(ctx, &jsonrpc.Message{Method: "m"}) }()
	b.Close()
	if err := <-errc; !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("blocked write at close: %v", err)
	}
}

func TestLimits(t *testing.T) {
	a, b := NewPipe(jsonrpc.Limits{MaxSize: 64})
	defer a.Close()
	ctx := context.Background()
	big := jsontext.Value(`{"text":"0123456789012345678901234567890123456789"}`)
	if err := a.Write(ctx, &jsonrpc.Message{Method: "m", Params: big}); err != nil {
		t.Fatal(err)
	}
	var de *jsonrpc.DecodeError
	if _, err := b.Read(); !errors.As(err, &de) {
		t.Errorf("oversized message: %v, want a decode error", err)
	}
	// An invalid raw value is caught by the reader, as on a real wire.
	if err := a.Write(ctx, &jsonrpc.Message{Method: "m", Params: jsontext.Value(`{"a":}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(); !errors.As(err, &de) || de.Err.Code != jsonrpc.CodeParseError {
		t.Errorf("invalid message: %v, want a parse error", err)
	}
}

func BenchmarkMemoryRoundTrip(b *testing.B) {
	x, y := NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	server := jsonrpc2.NewConn(ctx, x, &jsonrpc2.ConnOptions{Handler: echo})
	defer server.Close()
	client := jsonrpc2.NewConn(ctx, y, nil)
	defer client.Close()
	params := jsontext.Value(`{"name":"echo","arguments":{"text":"hello"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Call(ctx, "tools/call", params); err != nil {
			b.Fatal(err)
		}
	}
}
