package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/memory"
)

// TestRestartBackoff: a server that crashes as it starts is restarted
// after the initial delay, doubled at each crash in a row; calls fail
// fast while it is down. One that crashes after a healthy run (of
// ResetAfter) is restarted at once, the delay back to the initial one
// (TestRestartAtOnceAfterHealthyRun).
func TestRestartBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{Restart: Backoff{
			Initial: time.Second, Max: 4 * time.Second, ResetAfter: time.Minute}})
		if err := h.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		s, _ := h.Server("a")
		crashAndCheck := func(wantDelay time.Duration) {
			t.Helper()
			h.crash("a")
			// The client reads the end of its stream within a tick or two:
			// between calls, its connection's reading turn waits a tick
			// for the next call (jsonrpc, ConnOptions.CallerReads).
			for range 10 {
				synctest.Wait()
				if s.Status().State != Ready {
					break
				}
				time.Sleep(time.Millisecond)
			}
			st := s.Status()
			if st.State != Down || KindOf(st.Err) != KindUnreachable {
				t.Fatalf("after a crash: %v %v", st.State, st.Err)
			}
			if d := time.Until(st.RetryAt); d != wantDelay {
				t.Errorf("restart in %v, want %v", d, wantDelay)
			}
			// Fail fast: no waiting for the restart.
			start := time.Now()
			_, err := s.CallTool(t.Context(), &protocol.CallToolParams{Name: "echo"})
			if KindOf(err) != KindUnreachable || time.Since(start) != 0 {
				t.Errorf("call while down: %v after %v", err, time.Since(start))
			}
			time.Sleep(wantDelay)
			synctest.Wait()
			if st := s.Status(); st.State != Ready {
				t.Fatalf("not restarted after %v: %v %v", wantDelay, st.State, st.Err)
			}
		}
		crashAndCheck(time.Second)
		crashAndCheck(2 * time.Second)
		crashAndCheck(4 * time.Second)
		crashAndCheck(4 * time.Second) // Max
		if st := s.Status(); st.Restarts != 4 {
			t.Errorf("restarts %d, want 4", st.Restarts)
		}
		res, err := s.CallTool(t.Context(), &protocol.CallToolParams{Name: "echo", Arguments: []byte(`{"message":"back"}`)})
		if err != nil || res.Content[0].Text != "a: back" {
			t.Errorf("after restarts: %v %+v", err, res)
		}
	})
}

// TestRestartAtOnceAfterHealthyRun: a crash that ends a run of
// ResetAfter (a tool that made the server exit) restarts it at once
// a call that comes meanwhile waits for it rather than failing; a crash
// right after that restart waits the initial delay, not more. On
// b211c63 the server stayed down for the doubled delay (4 s here, 30 s
// by default) and the call failed at once.
func TestRestartAtOnceAfterHealthyRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{Restart: Backoff{
			Initial: time.Second, Max: 4 * time.Second, ResetAfter: 10 * time.Second}})
		if err := h.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		s, _ := h.Server("a")
		for range 3 { // crashes as it starts: the delay grows to 4 s
			h.crash("a")
			synctest.Wait()
			time.Sleep(5 * time.Second)
			synctest.Wait()
		}
		time.Sleep(10 * time.Second) // a healthy run
		h.crash("a")
		start := time.Now()
		for range 10 {
			synctest.Wait()
			if st := s.Status(); st.State == Ready && st.Restarts == 4 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if st := s.Status(); st.State != Ready || st.Restarts != 4 {
			t.Fatalf("%v after a crash that ended a healthy run: %v, %d restarts, want ready after 4", time.Since(start), st.State, st.Restarts)
		}
		res, err := s.CallTool(t.Context(), &protocol.CallToolParams{Name: "echo", Arguments: []byte(`{"message":"back"}`)})
		if err != nil || res.Content[0].Text != "a: back" {
			t.Errorf("a call after the restart: %v %+v", err, res)
		}
		h.crash("a") // right after the restart: backoff, from the initial delay
		for range 10 {
			synctest.Wait()
			if s.Status().State != Ready {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if st := s.Status(); st.State != Down || time.Until(st.RetryAt) != time.Second {
			t.Errorf("a crash as it starts: %v, restart in %v, want down for 1s", st.State, time.Until(st.RetryAt))
		}
	})
}

// TestFailedStartsGiveUp: a server whose start keeps failing is given up
// after MaxAttempts; Start waits for that.
func TestFailedStartsGiveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{Restart: Backoff{
			Initial: time.Second, Max: time.Minute, MaxAttempts: 3}})
		h.refuse["a"] = true
		start := time.Now()
		err := h.Start(t.Context())
		if KindOf(err) != KindUnreachable {
			t.Fatalf("Start: %v", err)
		}
		if took := time.Since(start); took != 3*time.Second || h.openCount("a") != 3 {
			t.Errorf("gave up after %v and %d attempts, want 3s and 3", took, h.openCount("a"))
		}
		s, _ := h.Server("a")
		if st := s.Status(); st.State != Failed || st.Restarts != 2 {
			t.Errorf("status %v, %d restarts", st.State, st.Restarts)
		}
	})
}

// TestStartRecoversAfterCrash: a server that fails its first start comes
// up on the second, and Start waits for it.
func TestStartRecoversAfterCrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{Restart: Backoff{Initial: 500 * time.Millisecond}})
		h.refuse["a"] = true
		go func() {
			time.Sleep(100 * time.Millisecond)
			h.mu.Lock()
			h.refuse["a"] = false
			h.mu.Unlock()
		}()
		if err := h.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		s, _ := h.Server("a")
		if st := s.Status(); st.State != Ready || st.Restarts != 1 {
			t.Errorf("status %v, %d restarts", st.State, st.Restarts)
		}
	})
}

// TestTimeouts: the connect timeout; the request timeout reset by
// progress, with a maximum.
func TestTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := stdioEntry("a")
		cfg.Timeout = 500 * time.Millisecond
		h := newMemHost(t, []*config.Server{cfg}, &Options{MaxRequestTimeout: 2 * time.Second})
		if err := h.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		call := func(args string) (time.Duration, error) {
			start := time.Now()
			name, raw, _ := strings.Cut(args, "{")
			_, err := h.Call(t.Context(), "a__"+name, json.RawMessage("{"+raw))
			return time.Since(start), err
		}
		// 5 steps of 300ms: each progress resets the 500ms idle timeout.
		if took, err := call(`slow{"steps":5,"delayMs":300}`); err != nil || took != 1500*time.Millisecond {
			t.Errorf("slow with progress: %v after %v", err, took)
		}
		if took, err := call(`block{}`); KindOf(err) != KindTimeout || took != 500*time.Millisecond {
			t.Errorf("blocked call: %v after %v, want a timeout after 500ms", err, took)
		}
		if took, err := call(`slow{"steps":10,"delayMs":300}`); KindOf(err) != KindTimeout || took != 2*time.Second {
			t.Errorf("long call: %v after %v, want the 2s maximum", err, took)
		}
	})
}

func TestConnectTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newMemHost(t, []*config.Server{stdioEntry("a")}, &Options{ConnectTimeout: 2 * time.Second, Restart: Backoff{Disable: true}})
		var silent jsonrpc.Stream
		h.Host.opts.Transport = func(ctx context.Context, s *config.Server) (jsonrpc.Stream, error) {
			a, b := memory.NewPipe(jsonrpc.Limits{})
			silent = a // nobody answers
			return b, nil
		}
		start := time.Now()
		err := h.Start(t.Context())
		if KindOf(err) != KindTimeout || time.Since(start) != 2*time.Second {
			t.Errorf("Start: %v after %v", err, time.Since(start))
		}
		silent.Close()
	})
}
