package jsonrpc2

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestCancelBehindNotifications: a notifications/cancelled right behind
// its request reaches it even when the request waits behind a
// notification still being handled (on a12c33f the cancellation found no
// request in flight and was dropped: the handler ran and answered).
func TestCancelBehindNotifications(t *testing.T) {
	bubble(t, func(t *testing.T) {
		release := make(chan struct{})
		var ran atomic.Int32
		_, peer := withPeer(t, handle(func(ctx context.Context, m *Message) (any, error) {
			switch m.Method {
			case "notifications/slow":
				<-release
			case "tool":
				ran.Add(1)
				return "ran", nil
			}
			return nil, nil
		}))
		peer.send(`{"jsonrpc":"2.0","method":"notifications/slow"}`)
		peer.send(`{"jsonrpc":"2.0","id":7,"method":"tool"}`)
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"changed my mind"}}`)
		synctest.Wait()
		close(release)
		synctest.Wait()
		if n := ran.Load(); n != 0 {
			t.Errorf("the cancelled request ran (%d times)", n)
		}
		if p := peer.pending(); len(p) != 0 {
			t.Errorf("the cancelled request was answered: %q", p)
		}
		// Its id can be used again, and a request behind a notification
		// runs as before.
		peer.send(`{"jsonrpc":"2.0","method":"notifications/other"}`)
		peer.send(`{"jsonrpc":"2.0","id":7,"method":"tool"}`)
		if got := peer.recv(); got != `{"jsonrpc":"2.0","id":7,"result":"ran"}` {
			t.Errorf("got %s", got)
		}
	})
}
