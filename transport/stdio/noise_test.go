package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/jsonrpc"
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

// serveBanner writes a line that is not JSON and then: "bannerexit" a
// second one, and exits without reading its stdin; "bannerlast" a
// notification, and a second line once its stdin has ended.
func serveBanner(mode string) int {
	os.Stdout.WriteString("\x1b[31mServer listening on stdio\n")
	if mode == "bannerexit" {
		os.Stdout.WriteString("ready\n")
		return 0
	}
	os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"ready"}` + "\n")
	io.Copy(io.Discard, os.Stdin)
	os.Stdout.WriteString("bye\n")
	return 0
}

// TestClientNoiseCountedByClose: once Close returns, Skipped counts every
// line of noise the server wrote, also those no Read took: a server that
// prints a banner and exits before the client's first write (which then
// fails, and nothing reads) was said to have printed nothing, and so
// was what a server printed while Close stopped it.
func TestClientNoiseCountedByClose(t *testing.T) {
	for _, tc := range []struct {
		mode string
		// use is what the client does before Close; it returns what to
		// check after Close, if anything.
		use func(t *testing.T, s *ClientStream) (after func())
	}{
		{"bannerexit", func(t *testing.T, s *ClientStream) func() {
			<-s.Done() // the write comes after the exit, and fails
			var ee *ExitError
			if err := s.Write(t.Context(), &jsonrpc.Message{Method: "initialize", ID: jsonrpc.Int64ID(1)}); !errors.As(err, &ee) {
				t.Fatalf("Write: %v, want an *ExitError", err)
			}
			return nil
		}},
		{"bannerlast", func(t *testing.T, s *ClientStream) func() {
			if m, err := s.Read(); err != nil || m.Method != "ready" {
				t.Fatalf("Read: %v %v", m, err)
			}
			errc := make(chan error, 1)
			go func() { // in progress when Close comes, or not yet begun
				_, err := s.Read()
				errc <- err
			}()
			return func() {
				if err := <-errc; err != jsonrpc.ErrClosed {
					t.Errorf("Read during Close: %v, want jsonrpc.ErrClosed", err)
				}
			}
		}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			defer checkGoroutines(t)()
			s := connect(t, helperCommand(tc.mode))
			after := tc.use(t, s)
			s.Close()
			if after != nil {
				after()
			}
			if n, first := s.Skipped(); n != 2 || first != `"\x1b[31mServer listening on stdio"` {
				t.Errorf("Skipped after Close: %d %s, want 2 and the first line", n, first)
			}
		})
	}
}
