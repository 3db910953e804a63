package server

import (
	"runtime"
	"testing"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// A request of an initialized session is set up without the session's
// mutex, which every request in flight on a connection took (9 % of the
// server's CPU in lock contention at stdio c16). The test holds the mutex
// and gives sessionRequest a bounded number of turns to finish.
func TestSessionRequestTakesNoSessionLock(t *testing.T) {
	s := New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	sess := s.newSession(nil, "")
	s.initialize(sess, &protocol.InitializeParams{ProtocolVersion: protocol.Version20250618,
		ClientInfo: protocol.Implementation{Name: "c", Version: "2"}})
	done := make(chan *Request, 1)
	sess.mu.Lock()
	go func() {
		done <- s.sessionRequest(&jsonrpc.Message{ID: jsonrpc.Int64ID(1), Method: protocol.MethodToolsCall}, sess, nil)
	}()
	var r *Request
	for range 10000 {
		if r = received(done); r != nil {
			break
		}
		runtime.Gosched()
	}
	sess.mu.Unlock()
	if r == nil {
		<-done
		t.Fatal("sessionRequest waited for the session's mutex")
	}
	if r.ProtocolVersion != protocol.Version20250618 || r.ClientInfo.Name != "c" {
		t.Errorf("request has version %q, client %+v: want the handshake's", r.ProtocolVersion, r.ClientInfo)
	}
}

func received(c <-chan *Request) *Request {
	select {
	case r := <-c:
		return r
	default:
		return nil
	}
}

// Before initialize a session reports zero values; after it, what was
// settled.
func TestSessionHandshakeAccessors(t *testing.T) {
	s := New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	sess := s.newSession(nil, "")
	if sess.Initialized() || sess.ProtocolVersion() != "" || sess.ClientInfo().Name != "" {
		t.Fatalf("before initialize: %v %q %+v", sess.Initialized(), sess.ProtocolVersion(), sess.ClientInfo())
	}
	s.initialize(sess, &protocol.InitializeParams{ProtocolVersion: protocol.Version20250618,
		ClientInfo: protocol.Implementation{Name: "c", Version: "2"}})
	if !sess.Initialized() || sess.ProtocolVersion() != protocol.Version20250618 || sess.ClientInfo().Name != "c" {
		t.Errorf("after initialize: %v %q %+v", sess.Initialized(), sess.ProtocolVersion(), sess.ClientInfo())
	}
}
