package jsonrpc2

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// failingWrites is a pipe end whose every Write fails with err.
type failingWrites struct {
	*pipeStream
	err error
}

func (f *failingWrites) Write(context.Context, *Message) error { return f.err }

// TestErrNotSent: a call tells a request that never left (the
// connection had closed before it was written, or the stream says so)
// from one the peer may have got: only the first may be sent again. On
// b211c63 a call on a closed connection failed with ErrClosed alone,
// like one whose answer the close cut off.
func TestErrNotSent(t *testing.T) {
	brokenPipe := errors.New("broken pipe")
	tests := []struct {
		name       string
		writeErr   error                                   // nil: the stream writes
		before     func(t *testing.T, c *Conn, p *rawPeer) // what happens before the call
		during     func(p *rawPeer)                        // what the peer does with the request
		notSent    bool
		wantClosed bool
	}{
		{name: "the peer had gone", before: peerGone, notSent: true, wantClosed: true},
		{name: "closed by this side", before: func(t *testing.T, c *Conn, p *rawPeer) { c.Close() }, notSent: true, wantClosed: true},
		{name: "the peer went with the request", during: func(p *rawPeer) { p.recv(); p.closeWrite() }, wantClosed: true},
		{name: "the write failed", writeErr: brokenPipe},
		{name: "the stream says it never left", writeErr: fmt.Errorf("%w: %w", ErrNotSent, brokenPipe), notSent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, p := newRawPeer(t)
			var stream Stream = s
			if tt.writeErr != nil {
				stream = &failingWrites{s, tt.writeErr}
			}
			c := newConn(context.Background(), stream, nil)
			t.Cleanup(func() { c.Close(); c.Wait() })
			if tt.before != nil {
				tt.before(t, c, p)
			}
			if tt.during != nil {
				go tt.during(p)
			}
			_, err := c.Call(t.Context(), "tools/call", nil)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if got := errors.Is(err, ErrNotSent); got != tt.notSent {
				t.Errorf("errors.Is(%q, ErrNotSent) = %v, want %v", err, got, tt.notSent)
			}
			if got := errors.Is(err, ErrClosed); got != tt.wantClosed {
				t.Errorf("errors.Is(%q, ErrClosed) = %v, want %v", err, got, tt.wantClosed)
			}
			if tt.writeErr != nil && !errors.Is(err, brokenPipe) {
				t.Errorf("error %q lost the stream's %q", err, brokenPipe)
			}
		})
	}
}

// peerGone ends the peer's side, as a process that exited, and waits
// until the connection noticed.
func peerGone(t *testing.T, c *Conn, p *rawPeer) {
	p.closeWrite()
	<-c.Done()
}
