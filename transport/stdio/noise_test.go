package stdio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// records is a slog handler that keeps what it is given.
type records struct {
	mu   sync.Mutex
	list []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, r)
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// lines returns how many skipped lines the records account for: one for
// each record of a line, the count of each record of a count.
func (h *records) lines() (records, lines int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.list {
		n := 1
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "lines" {
				n = int(a.Value.Int64())
			}
			return true
		})
		lines += n
	}
	return len(h.list), lines
}

// TestNoiseBounded: lines that are not JSON are logged one by one up to
// noiseLogged, then counted, the count logged at most every noiseEvery
// and at the end (issue 31: 300 MiB of noise made 314,259 records).
func TestNoiseBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &records{}
		n := &noise{log: slog.New(h), pid: 1}
		step := func(lines int, wantRecords int) {
			t.Helper()
			for i := range lines {
				n.skip(fmt.Appendf(nil, "noise %d", i))
			}
			if got, _ := h.lines(); got != wantRecords {
				t.Fatalf("%d records, want %d", got, wantRecords)
			}
		}
		step(100_000, noiseLogged) // at once: the first few only
		time.Sleep(noiseEvery - time.Millisecond)
		step(1, noiseLogged)
		time.Sleep(time.Millisecond)
		step(1, noiseLogged+1) // the interval passed: the count
		step(10, noiseLogged+1)
		n.flush()
		n.flush() // nothing more to tell
		records, lines := h.lines()
		if records != noiseLogged+2 || lines != 100_012 {
			t.Errorf("%d records for %d lines, want %d for 100012", records, lines, noiseLogged+2)
		}
		if total, first := n.skipped(); total != 100_012 || first != `"noise 0"` {
			t.Errorf("skipped %d, first %s", total, first)
		}
	})
}

// TestQuoteStart: the start of a line for an error is short, quoted,
// escaped and never half a character.
func TestQuoteStart(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"Listening on :3000", `"Listening on :3000"`},
		{"\x1b]0;pwned\x07\x1b[2J", `"\x1b]0;pwned\a\x1b[2J"`},
		{"bad \xff byte", `"bad \xff byte"`},
		{strings.Repeat("a", noiseQuoted+5), `"` + strings.Repeat("a", noiseQuoted) + `"…`},
		{strings.Repeat("a", noiseQuoted-1) + "é!", `"` + strings.Repeat("a", noiseQuoted-1) + `"…`},
	} {
		if got := quoteStart([]byte(tc.in), noiseQuoted); got != tc.want {
			t.Errorf("quoteStart(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestClientNoiseLogBounded: a server that writes nothing but noise on
// stdout makes a few records, which count every line, and the stream
// tells what it skipped.
func TestClientNoiseLogBounded(t *testing.T) {
	defer checkGoroutines(t)()
	h := &records{}
	cmd := helperCommand("noise")
	cmd.Logger = slog.New(h)
	t0 := time.Now()
	s := connect(t, cmd)
	m, err := s.Read() // after the noise
	if err != nil || m.Method != "done" {
		t.Fatalf("Read: %v %v", m, err)
	}
	s.Close()
	records, lines := h.lines()
	// The first few, a count per interval passed, the last count.
	if bound := noiseLogged + 1 + int(time.Since(t0)/noiseEvery); records > bound || lines != noiseLines {
		t.Errorf("%d records for %d lines, want at most %d for %d", records, lines, bound, noiseLines)
	}
	if n, first := s.Skipped(); n != noiseLines || first != `"\x1b[31mnoise 0"` {
		t.Errorf("Skipped: %d %s", n, first)
	}
}

// noiseLines is how many lines the "noise" helper writes.
const noiseLines = 200_000

// serveNoise writes noiseLines lines that are not JSON, then a
// notification that says it is done, and exits at the end of its stdin.
func serveNoise() int {
	var b bytes.Buffer
	for i := range noiseLines {
		fmt.Fprintf(&b, "\x1b[31mnoise %d\n", i)
	}
	b.WriteString(`{"jsonrpc":"2.0","method":"done"}` + "\n")
	b.WriteTo(os.Stdout)
	io.Copy(io.Discard, os.Stdin)
	return 0
}
