package stdio

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/racecheck"
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
	big := map[string]string{"text": strings.Repeat("x", 3<<20)} // more than the pipe holds
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
			if !errors.Is(err, context.DeadlineExceeded) || took > 2*time.Second && !racecheck.Enabled {
				t.Errorf("call %d: %v after %v", i, err, took)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %d with a 300 ms timeout still waiting after 10 s", i)
		}
		cancel()
	}
}

// TestDroppedAnswerFailsCall: an answer the client cannot take (its id
// wrong, or over the size limit, the id first or last) fails its call at
// once, saying why, instead of leaving it to its timeout (on a12c33f each
// call waited its 5 s, or for ever without one).
func TestDroppedAnswerFailsCall(t *testing.T) {
	for _, tt := range []struct{ mode, want string }{
		{"wrongid", `answered id "3"`},
		{"huge", "exceeds the limit"},
		{"hugelast", "exceeds the limit"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			cmd := helperCommand(tt.mode)
			cmd.Limits = jsonrpc.Limits{MaxSize: 16 << 10}
			s := connect(t, cmd)
			defer s.Close()
			c := jsonrpc.NewConn(context.Background(), s, nil)
			defer c.Close()
			for range 2 { // ids 1 and 2 are not the ones checked
				wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
				c.Call(wctx, "warmup", nil)
				wcancel()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			_, err := c.Call(ctx, "tools/call", nil)
			took := time.Since(start)
			t.Logf("%s: %v after %v", tt.mode, err, took.Round(time.Millisecond))
			if err == nil || !strings.Contains(err.Error(), tt.want) || took > time.Second {
				t.Errorf("%s: %v after %v, want an error about %q at once", tt.mode, err, took, tt.want)
			}
		})
	}
}
