package stdio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// TestCallEndsAtDeadlineWhenServerDoesNotRead: a call whose request
// cannot be written, the server having stopped reading, ends when its
// context does (on a12c33f the write, and the call, waited for ever).
func TestCallEndsAtDeadlineWhenServerDoesNotRead(t *testing.T) {
	defer checkGoroutines(t)()
	cmd := helperCommand("deaf")
	cmd.CloseTimeout = 100 * time.Millisecond // it does not exit by itself: SIGTERM
	s := connect(t, cmd)
	defer s.Close()
	c := jsonrpc.NewConn(context.Background(), s, nil)
	defer c.Close()
	if _, err := c.Call(context.Background(), "ping", nil); err != nil {
		t.Fatal(err)
	}
	big := map[string]string{"text": strings.Repeat("x", 8<<20)} // more than the pipe holds
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, "big", big)
			done <- err
		}()
		select {
		case err := <-done:
			took := time.Since(start)
			t.Logf("call %d to a server that does not read, timeout 300 ms: %v after %v", i, err, took.Round(time.Millisecond))
			if !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second {
				t.Errorf("call %d: %v after %v", i, err, took)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d with a 300 ms timeout still waiting after 10 s", i)
		}
		cancel()
	}
}
