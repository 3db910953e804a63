package jsonrpc2

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// slowCancel is a stream whose write of notifications/cancelled blocks
// until released (or its context ends).
type slowCancel struct {
	Stream
	release chan struct{}
	written atomic.Bool
}

func (s *slowCancel) Write(ctx context.Context, m *Message) error {
	if m.Method == "notifications/cancelled" {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		s.written.Store(true)
	}
	return s.Stream.Write(ctx, m)
}

// TestAbandonDoesNotWait: a call whose context ends returns at once; the
// peer is told on the side (on a12c33f the caller waited for the write,
// up to a second).
func TestAbandonDoesNotWait(t *testing.T) {
	a, b := newPipe()
	started := make(chan struct{})
	server := NewConn(context.Background(), b, &ConnOptions{CancelMethod: "notifications/cancelled", Handler: HandlerFunc(func(ctx context.Context, m *Message) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})})
	defer server.Close()
	slow := &slowCancel{Stream: a, release: make(chan struct{})}
	c := NewConn(context.Background(), slow, &ConnOptions{CancelMethod: "notifications/cancelled"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.Call(ctx, "block", nil)
		done <- err
	}()
	<-started
	cancel()
	err := <-done
	if slow.written.Load() {
		t.Errorf("the call returned (%v) only once notifications/cancelled was written", err)
	}
	close(slow.release)
	for deadline := time.Now().Add(5 * time.Second); !slow.written.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if !slow.written.Load() {
		t.Error("notifications/cancelled was never written")
	}
	c.Close()
	c.Wait() // and the notification's goroutine with it
}
