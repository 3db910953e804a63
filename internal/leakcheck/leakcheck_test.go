package leakcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records what Errorf reports.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func withTimeout(t *testing.T, d time.Duration) {
	old := Timeout
	Timeout = d
	t.Cleanup(func() { Timeout = old })
}

func TestNoLeak(t *testing.T) {
	check := Snapshot()
	done := make(chan struct{})
	go func() { time.Sleep(20 * time.Millisecond); close(done) }()
	r := &recorder{TB: t}
	check(r) // waits for the goroutine above
	if len(r.errors) != 0 {
		t.Fatalf("unexpected report: %v", r.errors)
	}
	<-done
}

func TestLeakReported(t *testing.T) {
	withTimeout(t, 50*time.Millisecond)
	check := Snapshot()
	stop := make(chan struct{})
	go blockedForever(stop)
	r := &recorder{TB: t}
	check(r)
	close(stop)
	if len(r.errors) != 1 {
		t.Fatalf("got %d reports, want 1: %v", len(r.errors), r.errors)
	}
	if !strings.Contains(r.errors[0], "blockedForever") || !strings.Contains(r.errors[0], "1 goroutine(s)") {
		t.Errorf("report does not name the leaked goroutine:\n%s", r.errors[0])
	}
}

func blockedForever(stop chan struct{}) { <-stop }

func TestPreexistingIgnored(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	go blockedForever(stop)
	time.Sleep(time.Millisecond)
	withTimeout(t, 50*time.Millisecond)
	check := Snapshot()
	r := &recorder{TB: t}
	check(r)
	if len(r.errors) != 0 {
		t.Fatalf("goroutine started before the snapshot reported: %v", r.errors)
	}
}

func TestSubtestsIgnored(t *testing.T) {
	Check(t)
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { Check(t) })
	}
}

func TestIgnored(t *testing.T) {
	for _, tc := range []struct {
		stack string
		want  bool
	}{
		{"goroutine 7 [chan receive]:\ntesting.(*T).Run(0xc, {0x1, 0x2}, 0x3)\n\t/go/src/testing/testing.go:1\nmain.TestX(0x1)\n\t/x_test.go:3\ntesting.tRunner(0x1, 0x2)\n\t/go/src/testing/testing.go:2\ncreated by testing.(*T).Run in goroutine 1\n\t/go/src/testing/testing.go:3", true},
		{"goroutine 8 [select]:\nexample.com/p.(*Conn).read(0x1)\n\t/p/conn.go:10\ncreated by example.com/p.NewConn in goroutine 7\n\t/p/conn.go:5", false},
		{"goroutine 9 [runnable]:\nexample.com/p.f()\n\t/p/f.go:1\ntesting.tRunner(0x1, 0x2)\n\t/go/src/testing/testing.go:2\ncreated by example.com/p.g in goroutine 7\n\t/p/f.go:5", true},
		{"goroutine 8 [runnable]:\nexample.com/p.TestX.gowrap1()\n\t/p/x_test.go:11\nruntime.goexit({})\n\t/go/src/runtime/asm_amd64.s:1771 +0x1\ncreated by example.com/p.TestX in goroutine 7\n\t/p/x_test.go:11 +0xda", false},
		{"goroutine 11 [select]:\nexample.com/p.f()\n\t/p/f.go:1\nruntime.goexit({})\n\t/go/src/runtime/asm_amd64.s:1771 +0x1", false},
		{"goroutine 10 [syscall]:\nos/signal.signal_recv()\n\t/go/src/runtime/sigqueue.go:1\nos/signal.loop()\n\t/go/src/os/signal/signal_unix.go:2\ncreated by os/signal.Notify.func1.1 in goroutine 1\n\t/x:1", true},
	} {
		if got := ignored(tc.stack); got != tc.want {
			t.Errorf("ignored(%q) = %v, want %v", tc.stack, got, tc.want)
		}
	}
}
