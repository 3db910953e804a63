package gateway

import (
	"context"
	"testing"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// TestRouteToTheCallThatMayAsk: a server's sampling request over a shared
// connection goes to the one call in flight that holds the link's slot
// (its kind may ask), not refused as ambiguous because another client's
// call of a kind seen not to ask is in flight beside it. interop's
// TestGatewayTypeScriptClients failed so, once in a while: bob's echo
// overlapped alice's trigger-sampling-request.
func TestRouteToTheCallThatMayAsk(t *testing.T) {
	sampling := protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}}
	alice := &server.Session{}
	bob := &server.Session{}
	asks := &call{Context: context.Background(), kind: kind{"tools/call", "trigger-sampling-request"},
		req: &server.Request{ClientCapabilities: sampling, Session: alice}, slot: true}
	echo := &call{Context: context.Background(), kind: kind{"tools/call", "echo"},
		req: &server.Request{ClientCapabilities: sampling, Session: bob}}
	cases := []struct {
		name    string
		calls   []*call
		want    *call
		wantErr bool
	}{
		{"the slot holder beside a call that does not ask", []*call{asks, echo}, asks, false},
		{"no slot holder: one client", []*call{echo}, echo, false},
		{"no slot holder: two clients", []*call{echo, {Context: context.Background(), kind: kind{"tools/call", "echo"},
			req: &server.Request{ClientCapabilities: sampling, Session: alice}}}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &link{calls: map[*call]struct{}{}, learned: map[kind]bool{}}
			for _, c := range tc.calls {
				l.calls[c] = struct{}{}
			}
			got, err := l.route(context.Background(), protocol.MethodCreateMessage)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("route: %v, %v; want the call %v, an error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestRefusedQuestionTeachesThatTheKindAsks: a question for the one call
// in flight, whose client cannot answer it, is refused, and the call's
// kind is then known to ask, so that a capable client's call of it later
// holds the slot.
func TestRefusedQuestionTeachesThatTheKindAsks(t *testing.T) {
	c := &call{Context: context.Background(), kind: kind{"tools/call", "trigger-sampling-request"},
		req: &server.Request{ClientCapabilities: protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}}}}
	l := &link{calls: map[*call]struct{}{c: {}}, learned: map[kind]bool{}, slot: make(chan struct{}, 1)}
	if _, err := l.route(context.Background(), protocol.MethodCreateMessage); err == nil {
		t.Fatal("routed to a client without sampling")
	}
	l.end(c, true)
	if asks, known := l.learned[c.kind]; !known || !asks {
		t.Errorf("learned %v (known %v), want that the kind asks", asks, known)
	}
}
