package stdio

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// The reader of a reopened pipe reads what is written, reports the end of
// input, is interrupted whether or not a Read is blocked, and leaves no
// descriptor behind.
func TestPollReader(t *testing.T) {
	before := openFDs(t)
	for _, blocked := range []bool{false, true} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		g, interrupt := reopen(r)
		if g == nil {
			t.Fatal("reopen of a pipe gave nothing")
		}
		buf := make([]byte, 16)
		w.Write([]byte("hello"))
		if n, err := g.Read(buf); err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("Read = %q, %v", buf[:n], err)
		}
		if blocked {
			errc := make(chan error, 1)
			go func() {
				_, err := g.Read(buf)
				errc <- err
			}()
			time.Sleep(10 * time.Millisecond) // most likely in poll by now; either way Read must end
			interrupt()
			wantClosed(t, errc, "blocked Read after interrupt")
		} else {
			w.Close()
			if _, err := g.Read(buf); err != io.EOF {
				t.Errorf("Read at the end: %v, want io.EOF", err)
			}
			interrupt()
		}
		if _, err := g.Read(buf); err != jsonrpc.ErrClosed {
			t.Errorf("Read after interrupt: %v, want jsonrpc.ErrClosed", err)
		}
		if err := interrupt(); err != nil {
			t.Errorf("second interrupt: %v", err)
		}
		r.Close()
		w.Close()
	}
	if after := openFDs(t); after != before {
		t.Errorf("open descriptors: %d before, %d after", before, after)
	}
}
