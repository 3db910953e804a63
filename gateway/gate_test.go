package gateway

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

var (
	sampling   = protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}}
	elicits    = protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}}
	noCaps     = protocol.ClientCapabilities{}
	askingKind = kind{"tools/call", "trigger-sampling-request"}
	echoKind   = kind{"tools/call", "echo"}
)

// gateCall is a call of a client (a legacy session, or a stateless
// request when sess is nil) as the gate sees it.
func gateCall(ctx context.Context, sess *server.Session, caps protocol.ClientCapabilities, k kind) *call {
	return &call{Context: ctx, kind: k, req: &server.Request{ClientCapabilities: caps, Session: sess}}
}

// TestGateRoute: a question that names no request goes to the one client
// with calls in flight, and only if it can answer; with calls of two
// clients in flight it is refused, whichever of them may ask (security
// issue 29: b211c63 gave it to the call holding the link's slot, or to the
// one capable client, so that one client's question reached another).
func TestGateRoute(t *testing.T) {
	bg := context.Background()
	alice, bob := &server.Session{}, &server.Session{}
	asks := gateCall(bg, alice, sampling, askingKind)
	asks.owns, asks.gated = true, true
	aliceEcho := gateCall(bg, alice, sampling, echoKind)
	bobEcho := gateCall(bg, bob, sampling, echoKind)
	bobCannot := gateCall(bg, bob, noCaps, askingKind)
	statelessA := gateCall(bg, nil, sampling, askingKind)
	statelessB := gateCall(bg, nil, sampling, askingKind)
	elicitOnly := gateCall(bg, nil, elicits, askingKind)
	cases := []struct {
		name     string
		calls    []*call
		want     *call
		wantCode int64 // 0: routed
	}{
		{"one call", []*call{bobEcho}, bobEcho, 0},
		{"two calls of one session: the owner", []*call{aliceEcho, asks}, asks, 0},
		{"an owner beside another client's call", []*call{asks, bobEcho}, nil, jsonrpc.CodeInternalError},
		{"an owner beside a client that cannot answer", []*call{asks, bobCannot}, nil, jsonrpc.CodeInternalError},
		{"two stateless requests", []*call{statelessA, statelessB}, nil, jsonrpc.CodeInternalError},
		{"one client that cannot answer", []*call{bobCannot}, nil, jsonrpc.CodeMethodNotFound},
		{"one client without that capability", []*call{elicitOnly}, nil, jsonrpc.CodeMethodNotFound},
		{"no call", nil, nil, jsonrpc.CodeInternalError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var g gate
			for _, c := range tc.calls {
				g.enter(c)
			}
			got, err := g.route(protocol.MethodCreateMessage)
			var code int64
			var rpc *jsonrpc.Error
			if errors.As(err, &rpc) {
				code = rpc.Code
			}
			if got != tc.want || code != tc.wantCode {
				t.Errorf("route: %p, %v; want %p, code %d", got, err, tc.want, tc.wantCode)
			}
		})
	}
}

// TestGateLearns: a question refused as ambiguous, or put to a client that
// cannot answer it, teaches the gate that the kinds in flight ask, so
// that a capable client's call of them owns the gate from then on; a kind
// that completes without asking does not own it.
func TestGateLearns(t *testing.T) {
	bg := context.Background()
	var g gate
	a := gateCall(bg, &server.Session{}, noCaps, askingKind)
	g.enter(a)
	if _, err := g.route(protocol.MethodCreateMessage); err == nil {
		t.Fatal("routed to a client without sampling")
	}
	g.leave(a, true)
	e1 := gateCall(bg, &server.Session{}, sampling, echoKind)
	g.enter(e1)
	g.leave(e1, true)
	if !g.mayAsk(askingKind) || g.mayAsk(echoKind) {
		t.Errorf("learned %v, want that %v asks and %v does not", g.learned, askingKind, echoKind)
	}
	e2, x := gateCall(bg, &server.Session{}, sampling, echoKind), gateCall(bg, &server.Session{}, sampling, kind{"tools/call", "x"})
	g.enter(e2)
	g.enter(x)
	if _, err := g.route(protocol.MethodCreateMessage); err == nil {
		t.Fatal("routed a question with two clients in flight")
	}
	if !g.mayAsk(echoKind) {
		t.Error("a kind in flight beside an ambiguous question is still taken not to ask")
	}
}

// gateLink is a link with nothing behind it but its gate.
func gateLink() *link { return &link{up: &upstream{name: "s"}} }

// admitted starts l.begin(c) and returns where its result arrives.
func admitted(l *link, c *call) chan error {
	errc := make(chan error, 1)
	go func() { errc <- l.begin(c, false) }()
	return errc
}

// pending reports whether errc has no result yet, once every goroutine
// of the bubble is blocked.
func pendingBegin(errc chan error) bool {
	synctest.Wait()
	select {
	case err := <-errc:
		errc <- err
		return false
	default:
		return true
	}
}

// TestGateAdmission: on a shared link, a call that may ask runs with no
// other client's call in flight, and other clients' calls wait while it
// runs, so that its question is attributable.
func TestGateAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bg := context.Background()
		l := gateLink()
		alice, bob := &server.Session{}, &server.Session{}
		echo := gateCall(bg, bob, noCaps, echoKind)
		if err := l.begin(echo, false); err != nil {
			t.Fatal(err)
		}
		owner := gateCall(bg, alice, sampling, askingKind)
		ownerIn := admitted(l, owner)
		if !pendingBegin(ownerIn) {
			t.Fatal("a call that may ask was admitted beside another client's call")
		}
		// Waiting owners go first: another client's call waits too.
		late := gateCall(bg, &server.Session{}, noCaps, echoKind)
		lateIn := admitted(l, late)
		if !pendingBegin(lateIn) {
			t.Fatal("a call went ahead of a waiting owner")
		}
		l.end(echo, true)
		if err := <-ownerIn; err != nil {
			t.Fatal(err)
		}
		if !pendingBegin(lateIn) {
			t.Fatal("another client's call was admitted while an owner runs")
		}
		// The owner's own client is not kept out.
		same := gateCall(bg, alice, sampling, echoKind)
		if err := l.begin(same, false); err != nil {
			t.Fatal(err)
		}
		l.end(same, true)
		l.end(owner, true)
		if err := <-lateIn; err != nil {
			t.Fatal(err)
		}
		l.end(late, true)
	})
}

// TestGateParked: while an owner's question waits for its client (issue
// 31: a stateless client may leave it for the pending TTL), other
// clients' calls that do not own go ahead, an owner of another client
// fails after parkedWait (seconds, not the TTL) with an error saying why,
// and the parked call goes on only once the calls admitted meanwhile end.
func TestGateParked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bg := context.Background()
		l := gateLink()
		owner := gateCall(bg, nil, sampling, askingKind)
		if err := l.begin(owner, false); err != nil {
			t.Fatal(err)
		}
		l.park(owner)
		echo := gateCall(bg, &server.Session{}, sampling, echoKind)
		l.mu.Lock()
		l.gate.learn(echoKind, false)
		l.mu.Unlock()
		if err := l.begin(echo, false); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		other := gateCall(bg, nil, sampling, askingKind)
		err := l.begin(other, false)
		if err == nil || time.Since(start) != parkedWait {
			t.Fatalf("an owner beside a parked one: %v after %v, want an error after %v", err, time.Since(start), parkedWait)
		}
		t.Logf("refused: %v", err)
		unparked := make(chan error, 1)
		go func() { unparked <- l.unpark(owner) }()
		synctest.Wait()
		select {
		case err := <-unparked:
			t.Fatalf("unparked (%v) with another client's call in flight", err)
		default:
		}
		l.end(echo, true)
		if err := <-unparked; err != nil {
			t.Fatal(err)
		}
		l.end(owner, true)
		if len(l.gate.calls) != 0 || len(l.gate.waiting) != 0 || l.gate.owning != 0 {
			t.Errorf("gate left with %d calls, %d waiting, %d owning", len(l.gate.calls), len(l.gate.waiting), l.gate.owning)
		}
	})
}

// TestGateCancelledWait: a call cancelled while it waits leaves the gate
// as it found it.
func TestGateCancelledWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := gateLink()
		owner := gateCall(context.Background(), &server.Session{}, sampling, askingKind)
		if err := l.begin(owner, false); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		waiter := gateCall(ctx, &server.Session{}, sampling, askingKind)
		in := admitted(l, waiter)
		synctest.Wait()
		cancel()
		if err := <-in; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: %v", err)
		}
		l.end(owner, true)
		if len(l.gate.waiting) != 0 || len(l.gate.calls) != 0 || l.gate.owning != 0 {
			t.Errorf("gate left with %d waiting, %d calls, %d owning", len(l.gate.waiting), len(l.gate.calls), l.gate.owning)
		}
	})
}
