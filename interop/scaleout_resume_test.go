package interop

// A stream resumes on another replica: a client reads the first events
// of a tools/call's stream through HAProxy, loses the connection, and
// resumes it with Last-Event-ID once HAProxy sends it to the other
// replica (the first drains on SIGTERM, its call running on): the
// events it missed and the response come from the store the replicas
// share.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/protocol"
)

// rawSession is a legacy session spoken in plain HTTP, to hold streams
// and Last-Event-ID in hand.
type rawSession struct {
	url, id string
}

// post sends one JSON-RPC message; the caller closes the answer.
func (s *rawSession) post(t *testing.T, ctx context.Context, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	s.headers(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		out, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s\n%s", body, resp.Status, out)
	}
	return resp
}

func (s *rawSession) headers(req *http.Request) {
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
	}
}

// openRawSession initializes a legacy session at url.
func openRawSession(t *testing.T, ctx context.Context, url string) *rawSession {
	t.Helper()
	s := &rawSession{url: url}
	resp := s.post(t, ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"resume-test","version":"1"}}}`, protocol.LatestLegacyVersion))
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if s.id = resp.Header.Get("Mcp-Session-Id"); s.id == "" {
		t.Fatal("initialize gave no session id")
	}
	resp = s.post(t, ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	return s
}

// sseEvent is one event of an event stream.
type sseEvent struct{ id, data string }

// readEvent reads the next event that carries data.
func readEvent(br *bufio.Reader) (sseEvent, error) {
	var e sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return e, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && e.data != "":
			return e, nil
		case strings.HasPrefix(line, "id:"):
			e.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			e.data += strings.TrimSpace(line[5:])
		}
	}
}

// progressOf returns the progress a notification reports, 0 for another
// message.
func progressOf(data string) float64 {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Progress float64 `json:"progress"`
		} `json:"params"`
	}
	json.Unmarshal([]byte(data), &m)
	if m.Method != protocol.NotificationProgress {
		return 0
	}
	return m.Params.Progress
}

// callsInFlight returns how many tools/call a replica is serving, from
// its /metrics.
func callsInFlight(t *testing.T, replica string) int {
	t.Helper()
	resp, err := http.Get(replica + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n := 0
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "mcp_server_requests_in_flight{") && strings.Contains(line, `method="tools/call"`) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += int(v)
		}
	}
	return n
}

func TestScaleOutStreamResumesOnOtherReplica(t *testing.T) {
	cl := startCluster(t, 2, "--drain-notice", "1s", "--drain", "20s")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := openRawSession(t, ctx, cl.lb+"/mcp")

	const steps = 10
	resp := s.post(t, ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"everything__countdown","arguments":{"steps":%d,"delayMs":300},"_meta":{"progressToken":"p"}}}`, steps))
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the call's answer is %s, not an event stream", ct)
	}
	br := bufio.NewReader(resp.Body)
	var last sseEvent
	for range 2 {
		e, err := readEvent(br)
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	resp.Body.Close() // the connection is lost; the call runs on
	owner := -1
	for i, u := range cl.urls {
		if callsInFlight(t, u) > 0 {
			owner = i
		}
	}
	if owner < 0 || progressOf(last.data) != 2 {
		t.Fatalf("after two events (the last %+v), no replica runs the call", last)
	}
	t.Logf("replica %d runs the call; the client read up to event %s", owner, last.id)

	// The owner drains: HAProxy sends everything to the other from now on.
	cl.replicas[owner].Process.Signal(syscall.SIGTERM)
	waitFor(t, "HAProxy to take the draining replica out", func() bool { return cl.up() == 1 })

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cl.lb+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", last.id)
	s.headers(req)
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if got.StatusCode != http.StatusOK {
		out, _ := io.ReadAll(got.Body)
		t.Fatalf("resuming after %s on the other replica: %s\n%s", last.id, got.Status, bytes.TrimSpace(out))
	}
	br = bufio.NewReader(got.Body)
	want := 3.0
	for {
		e, err := readEvent(br)
		if err != nil {
			t.Fatalf("the resumed stream ended before the response (next progress %v): %v", want, err)
		}
		if p := progressOf(e.data); p != 0 {
			if p != want {
				t.Fatalf("resumed with progress %v, want %v: %s", p, want, e.data)
			}
			want++
			continue
		}
		if !strings.Contains(e.data, fmt.Sprintf("counted down %d steps", steps)) {
			t.Fatalf("the resumed stream's response: %s", e.data)
		}
		break
	}
	if want != steps+1 {
		t.Errorf("the resumed stream gave progress up to %v, want %d", want-1, steps)
	}
	if err := cl.replicas[owner].Wait(); err != nil {
		t.Errorf("the drained replica: %v", err)
	}
}
