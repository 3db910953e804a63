package host

import (
	"testing"
	"time"

	"github.com/ferrymcp/ferry/config"
)

// TestInvalidCommandNotRetried: a server whose command the system cannot
// run as given (here an argument with a NUL byte) fails at once as a
// configuration error, and is not restarted (on a12c33f it was
// "unreachable", and restarted with backoff).
func TestInvalidCommandNotRetried(t *testing.T) {
	cfg := &config.Server{Name: "nul", Transport: config.Stdio, Command: "/bin/echo", Args: []string{"a\x00b"}}
	h, err := New([]*config.Server{cfg}, &Options{Restart: Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(t.Context()); err == nil {
		t.Fatal("Start succeeded")
	}
	time.Sleep(100 * time.Millisecond) // time for restarts, if any
	s, _ := h.Server("nul")
	st := s.Status()
	t.Logf("state %v, kind %v, restarts %d: %v", st.State, KindOf(st.Err), st.Restarts, st.Err)
	if st.State != Failed || KindOf(st.Err) != KindConfig || st.Restarts != 0 {
		t.Errorf("state %v, kind %v, restarts %d, want failed, config, 0", st.State, KindOf(st.Err), st.Restarts)
	}
}
