package jsonrpc2

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
)

// Cancellation, in both directions, by the notification
// ConnOptions.CancelMethod names (JSON-RPC itself has none).

type cancelledParams struct {
	RequestID ID     `json:"requestId"`
	Reason    string `json:"reason,omitempty"`
}

// cancelled cancels the request a cancellation (CancelMethod) names. It runs
// on the reading goroutine, so that it reaches a request however busy the
// handlers are.
func (c *Conn) cancelled(m *Message) {
	var p cancelledParams
	if json.Unmarshal(m.Params, &p) != nil || !p.RequestID.IsValid() {
		return
	}
	c.mu.Lock()
	in, ok := c.incoming[p.RequestID]
	if ok {
		in.cancelledByPeer = true
	} else if _, queued := c.deferred[p.RequestID]; queued {
		c.deferred[p.RequestID] = true // dropped when its turn comes
	}
	c.mu.Unlock()
	if ok {
		in.cancel(fmt.Errorf("cancelled by the peer: %s", p.Reason))
	}
}

// abandon gives up waiting for the answer to call id, and tells the peer.
func (c *Conn) abandon(ctx context.Context, id ID, cause error) error {
	c.forget(id)
	reason := cause.Error()
	if errors.Is(cause, context.DeadlineExceeded) {
		reason = "timeout"
	}
	if c.opts.CancelMethod == "" {
		return cause
	}
	// The peer is told on a goroutine of its own, which Close and Wait
	// wait for: the caller, whose context ended, must not wait for a slow
	// stream, and a program that closes right after must still tell.
	c.mu.Lock()
	if c.closeErr != nil || c.closing {
		c.mu.Unlock()
		return cause
	}
	c.notices.Add(1)
	c.mu.Unlock()
	values := context.WithoutCancel(ctx)
	go func() {
		defer c.notices.Done()
		nctx, cancel := context.WithTimeout(values, time.Second)
		c.Notify(nctx, c.opts.CancelMethod, &cancelledParams{RequestID: id, Reason: reason})
		cancel()
	}()
	return cause
}

// givenUp remembers the ids of the latest calls given up (timed out,
// cancelled, failed to send), whose answers may still come: such an
// answer is dropped quietly, not taken for a wrong id.
type givenUp struct {
	ids  [64]ID
	next int
}

func (g *givenUp) add(id ID) {
	g.ids[g.next%len(g.ids)] = id
	g.next++
}

func (g *givenUp) has(id ID) bool {
	for _, x := range g.ids {
		if x == id && x.IsValid() {
			return true
		}
	}
	return false
}
