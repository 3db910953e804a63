package jsonrpc2

import (
	"context"
	"errors"
	"io"
	"testing"
)

// capStream is a stream with every capability, each call recorded.
type capStream struct {
	calls []string
	read  []*Message
}

func (s *capStream) Read() (*Message, error) {
	s.calls = append(s.calls, "Read")
	if len(s.read) == 0 {
		return nil, io.EOF
	}
	m := s.read[0]
	s.read = s.read[1:]
	return m, nil
}

func (s *capStream) Write(ctx context.Context, m *Message) error {
	s.calls = append(s.calls, "Write")
	return nil
}

func (s *capStream) Close() error { s.calls = append(s.calls, "Close"); return nil }

func (s *capStream) Buffered() bool { s.calls = append(s.calls, "Buffered"); return true }

func (s *capStream) WriteBuffered(ctx context.Context, m *Message) error {
	s.calls = append(s.calls, "WriteBuffered")
	return nil
}

func (s *capStream) Request(ctx context.Context, m *Message) (*Message, error) {
	s.calls = append(s.calls, "Request")
	return &Message{ID: m.ID, Result: []byte(`{}`)}, nil
}

func (s *capStream) Recycle(m *Message)         { s.calls = append(s.calls, "Recycle") }
func (s *capStream) InterruptRead()             { s.calls = append(s.calls, "InterruptRead") }
func (s *capStream) MirrorsHeaders() bool       { return true }
func (s *capStream) CloseRequestStream(ID) bool { return true }

// plainStream wraps a stream without saying so: no capability passes.
type plainStream struct{ Stream }

// wrapStream is a Wrapper that implements no capability itself.
type wrapStream struct{ Stream }

func (w wrapStream) Unwrap() Stream { return w.Stream }

// TestAs: capabilities that carry no message are found through
// wrappers; those that carry messages only on the stream itself.
func TestAs(t *testing.T) {
	s := &capStream{}
	check := func(name string, st Stream, want map[string]bool) {
		t.Helper()
		got := map[string]bool{}
		_, got["Requester"] = As[Requester](st)
		_, got["Batcher"] = As[Batcher](st)
		_, got["Recycler"] = As[Recycler](st)
		_, got["ReadInterrupter"] = As[ReadInterrupter](st)
		_, got["HeaderMirror"] = As[HeaderMirror](st)
		_, got["RequestStreamCloser"] = As[RequestStreamCloser](st)
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: As[%s] found %v, want %v", name, k, got[k], w)
			}
		}
	}
	all := map[string]bool{"Requester": true, "Batcher": true, "Recycler": true, "ReadInterrupter": true, "HeaderMirror": true, "RequestStreamCloser": true}
	check("the stream", s, all)
	check("a plain wrapper", plainStream{s}, map[string]bool{"Requester": false, "Batcher": false, "Recycler": false, "ReadInterrupter": false, "HeaderMirror": false, "RequestStreamCloser": false})
	check("an Unwrap wrapper", wrapStream{wrapStream{s}}, map[string]bool{"Requester": false, "Batcher": false, "Recycler": true, "ReadInterrupter": true, "HeaderMirror": true, "RequestStreamCloser": true})
	check("Observe", Observe(s, Observer{}), all)
	check("Observe over an Unwrap wrapper", Observe(wrapStream{s}, Observer{}), map[string]bool{"Requester": false, "Batcher": false, "Recycler": true, "ReadInterrupter": true})
	check("nil", nil, map[string]bool{"Requester": false, "Recycler": false})
}

// TestObserve: every message that crosses an observed stream is seen,
// whichever capability carried it, and the calls reach the stream.
func TestObserve(t *testing.T) {
	s := &capStream{read: []*Message{{Method: "in"}}}
	var seen []string
	var readErrs []error
	o := Observe(s, Observer{
		Message: func(m *Message, sent bool) {
			dir := "<-"
			if sent {
				dir = "->"
			}
			seen = append(seen, dir+m.Method+string(m.Result))
		},
		ReadError: func(err error) { readErrs = append(readErrs, err) },
	})
	ctx := context.Background()
	if m, err := o.Read(); err != nil || m.Method != "in" {
		t.Fatalf("Read: %v %v", m, err)
	}
	o.Write(ctx, &Message{Method: "write"})
	o.(Batcher).WriteBuffered(ctx, &Message{Method: "buffered"})
	if !o.(Batcher).Buffered() {
		t.Error("Buffered not passed on")
	}
	if r, err := o.(Requester).Request(ctx, &Message{ID: Int64ID(1), Method: "call"}); err != nil || r == nil {
		t.Fatalf("Request: %v %v", r, err)
	}
	if _, err := o.Read(); !errors.Is(err, io.EOF) {
		t.Fatalf("Read at the end: %v", err)
	}
	o.Close()
	want := []string{"<-in", "->write", "->buffered", "->call", "<-{}"}
	if len(seen) != len(want) {
		t.Fatalf("seen %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("seen %q, want %q", seen, want)
		}
	}
	if len(readErrs) != 1 || !errors.Is(readErrs[0], io.EOF) {
		t.Errorf("read errors %v", readErrs)
	}
	wantCalls := []string{"Read", "Write", "WriteBuffered", "Buffered", "Request", "Read", "Close"}
	if len(s.calls) != len(wantCalls) {
		t.Fatalf("calls %q, want %q", s.calls, wantCalls)
	}
	for i := range wantCalls {
		if s.calls[i] != wantCalls[i] {
			t.Fatalf("calls %q, want %q", s.calls, wantCalls)
		}
	}
}
