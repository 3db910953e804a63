// Package leakcheck fails a test that leaves goroutines behind.
//
// Call [Check] at the start of a test:
//
//	func TestX(t *testing.T) {
//		leakcheck.Check(t)
//		...
//	}
//
// Check records the goroutines running at that moment. When the test ends
// (in a cleanup registered by Check, which therefore runs after every
// cleanup the test registers later, such as closing a connection), it
// waits up to [Timeout] for every goroutine started since to exit and
// fails the test listing the stacks of those still running. Goroutines of
// the runtime and of the testing package are ignored.
//
// With testing/synctest, call Check with the outer t, before
// synctest.Test: the bubble's goroutines must be gone when it returns.
//
// Check is not meant for tests that call t.Parallel: goroutines of tests
// running alongside would be reported as leaks. It uses only the standard
// library.
package leakcheck

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Timeout is how long a check waits for goroutines to exit.
var Timeout = 3 * time.Second

// Check records the goroutines running now and registers a cleanup that
// fails t if goroutines started afterwards are still running when the test
// ends, after waiting up to [Timeout] for them to exit.
func Check(t testing.TB) {
	t.Helper()
	check := Snapshot()
	t.Cleanup(func() { check(t) })
}

// Snapshot records the goroutines running now and returns a function that
// fails t if goroutines started since are still running, after waiting up
// to [Timeout] for them to exit. Use it to check one part of a test:
//
//	check := leakcheck.Snapshot()
//	... start and stop something ...
//	check(t)
func Snapshot() func(testing.TB) {
	before := make(map[uint64]bool)
	for _, g := range goroutines() {
		before[g.id] = true
	}
	return func(t testing.TB) {
		t.Helper()
		var leaked []goroutine
		deadline := time.Now().Add(Timeout)
		for wait := 100 * time.Microsecond; ; wait = min(2*wait, 50*time.Millisecond) {
			leaked = leaked[:0]
			for _, g := range goroutines() {
				if !before[g.id] && !ignored(g.stack) {
					leaked = append(leaked, g)
				}
			}
			if len(leaked) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(wait)
		}
		if len(leaked) == 0 {
			return
		}
		var b strings.Builder
		for _, g := range leaked {
			b.WriteString("\n\n")
			b.WriteString(g.stack)
		}
		t.Errorf("leakcheck: %d goroutine(s) still running %v after the test:%s", len(leaked), Timeout, b.String())
	}
}

type goroutine struct {
	id    uint64
	stack string
}

// goroutines returns every goroutine but the caller's, with its stack.
func goroutines() []goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var gs []goroutine
	for i, block := range bytes.Split(buf, []byte("\n\n")) {
		if i == 0 {
			continue // the calling goroutine
		}
		// "goroutine 42 [chan receive]:"
		rest, ok := bytes.CutPrefix(block, []byte("goroutine "))
		if !ok {
			continue
		}
		idText, _, _ := bytes.Cut(rest, []byte(" "))
		id, err := strconv.ParseUint(string(idText), 10, 64)
		if err != nil {
			continue
		}
		gs = append(gs, goroutine{id: id, stack: string(bytes.TrimSpace(block))})
	}
	return gs
}

// ignored reports whether a goroutine belongs to the runtime or to the
// testing package rather than to the code under test: whether the
// function it started in, or the one that started it, is theirs.
func ignored(stack string) bool {
	entry := ""
	for _, l := range strings.Split(stack, "\n")[1:] {
		switch {
		case strings.HasPrefix(l, "\t"):
			// "\tfile:line": the frame's position
		case strings.HasPrefix(l, "created by "):
			return system(strings.TrimPrefix(l, "created by ")) || system(entry)
		case strings.HasPrefix(l, "runtime.goexit("):
			// the bottom frame of every goroutine, shown in some builds
		default:
			entry = l
		}
	}
	return system(entry)
}

func system(fn string) bool {
	for _, p := range []string{"testing.", "testing/", "runtime.", "runtime/", "os/signal."} {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
