package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// fakeServer stands for the replicas: it forgets the first legacy
// session it opened after its forgetAt-th call, and one client's call
// never returns once stuckAfter calls were made (a hang the soak must
// report and survive).
type fakeServer struct {
	mu         sync.Mutex
	calls      int
	sessions   int
	forgetAt   int
	stuckAfter int
	release    chan struct{}
}

type fakeConn struct {
	s       *fakeServer
	era     wire.Era
	session int
}

func (s *fakeServer) dial(era wire.Era) (soakConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions++
	return &fakeConn{s: s, era: era, session: s.sessions}, nil
}

func (c *fakeConn) Call(_ int, msg []byte) error {
	s := c.s
	s.mu.Lock()
	s.calls++
	n := s.calls
	forgotten := c.era == wire.Legacy && c.session == 1 && n > s.forgetAt
	stuck := n == s.stuckAfter
	s.mu.Unlock()
	time.Sleep(time.Millisecond)
	switch {
	case stuck:
		<-s.release
		return os.ErrDeadlineExceeded
	case forgotten:
		return errors.New(`HTTP 404: {"error":"session not found"}`)
	}
	return nil
}

func (c *fakeConn) Close() error { return nil }

// TestSoakCountsEveryCall runs 4 clients for 10 s of a bubble's time,
// each calling once a second: every call is counted once, in the window
// it ended in; the forgotten session is counted lost once, after which
// the client opens a new one; and a call that never returns is reported
// as hung without holding the soak up.
func TestSoakCountsEveryCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeServer{forgetAt: 10, stuckAfter: 30, release: make(chan struct{})}
		c := soakConfig{eras: []wire.Era{wire.Legacy, wire.Modern}, clients: 4, duration: 10 * time.Second,
			interval: time.Second, callTimeout: time.Second, sampleDur: 5 * time.Second, dial: s.dial}
		var out bytes.Buffer
		if err := soak(c, json.NewEncoder(&out)); err != nil {
			t.Fatal(err)
		}
		close(s.release)
		var lines []soakLine
		for l := range strings.Lines(out.String()) {
			var sl soakLine
			if err := json.Unmarshal([]byte(l), &sl); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, sl)
		}
		if len(lines) != 3 || lines[0].Kind != "window" || lines[1].Kind != "last" || lines[2].Kind != "total" {
			t.Fatalf("lines %+v, want two windows and the total", lines)
		}
		total := lines[2]
		// 40 calls were due, 4 a second; the 30th (in the eighth second)
		// never ended, and its client made none of its 2 calls after it.
		if want := int64(40 - 1 - 2); total.Calls != want {
			t.Errorf("%d calls counted, want %d", total.Calls, want)
		}
		if total.OK+failedCount(total) != total.Calls {
			t.Errorf("answered %d + failed %d != %d calls", total.OK, failedCount(total), total.Calls)
		}
		if total.Lost != 1 || total.Failed["session-not-found"] != 1 {
			t.Errorf("lost %d sessions, failed %v: want the forgotten session once", total.Lost, total.Failed)
		}
		if total.Hung != 1 {
			t.Errorf("hung %d, want the stuck client", total.Hung)
		}
		if s.sessions != 5 {
			t.Errorf("%d sessions opened, want 4 and the one opened again", s.sessions)
		}
		if got := lines[0].Calls + lines[1].Calls; got != total.Calls {
			t.Errorf("the windows hold %d calls, the total %d", got, total.Calls)
		}
	})
}

func TestErrKind(t *testing.T) {
	timeout := &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}
	cases := []struct {
		err  error
		want string
	}{
		{timeout, "timeout"},
		{fmt.Errorf("handshake: %w", timeout), "timeout"},
		{errors.New("HTTP 404: session not found"), "session-not-found"},
		{errors.New("HTTP 503: <html>no server available"), "http-503"},
		{fmt.Errorf("%w: got 3 bytes", wire.ErrMismatch), "mismatch"},
		{errors.New("handshake: HTTP 502: bad gateway"), "handshake"},
		{errors.New("read tcp: connection reset by peer"), "connection"},
	}
	for _, c := range cases {
		if got := errKind(c.err); got != c.want {
			t.Errorf("errKind(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// The report's verdicts follow the figures: a hang, a lost session and
// memory that grows are each called out.
func TestSoakReportVerdicts(t *testing.T) {
	sample := func(rss, redis int64) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"replicas":[{"name":"r1","rss_kb":%d}],"redis_used_memory":%d}`, rss, redis))
	}
	windows := func(rss ...int64) []soakLine {
		var ls []soakLine
		for i, r := range rss {
			ls = append(ls, soakLine{Kind: "window", Minute: float64(i + 1), Calls: 10, OK: 10, Sample: sample(r, 1<<20)})
		}
		return ls
	}
	cases := []struct {
		name  string
		lines []soakLine
		want  []string
	}{
		{"clean and flat", append(windows(9000, 20000, 21000, 20500, 21500), soakLine{Kind: "total", Clients: 2, Calls: 50, OK: 50}),
			[]string{"none hung: yes", "none needed a new initialize): yes", "r1 RSS after the 1 warm-up window(s): largest 20.5 MiB in the first half, 21.0 MiB in the second: flat"}},
		{"growing", append(windows(9000, 20000, 21000, 30000, 40000), soakLine{Kind: "total", Clients: 2, Calls: 50, OK: 50}),
			[]string{"r1 RSS after the 1 warm-up window(s): largest 20.5 MiB in the first half, 39.1 MiB in the second: **grew**"}},
		{"hung and lost", append(windows(1, 1, 1), soakLine{Kind: "total", Clients: 2, Calls: 30, OK: 29, Hung: 1, Lost: 1,
			Failed: map[string]int64{"session-not-found": 1}, FirstErr: map[string]string{"session-not-found": "HTTP 404"}}),
			[]string{"none hung: **no**", "none needed a new initialize): **no** (1)", "failed, session-not-found: 1; first: HTTP 404"}},
		{"unfinished", windows(1, 1, 1), []string{"The soak did not finish"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			soakReport(&b, "t", c.lines, 1)
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
