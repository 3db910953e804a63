package shared

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/protocol"
)

// The events of a stream come back after the number asked, with what
// their stream's newest says (a GET stream's, the end of a request's),
// each stream bounded and expiring.
func TestStreamEventsAppendRead(t *testing.T) {
	url, _ := redisServer(t)
	s := open(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const ttl = time.Minute
	events := []gateway.StreamEvent{
		{Stream: "s:a:7", Seq: 1, Data: []byte(`{"n":1}`)},
		{Stream: "s:a:7", Seq: 2, Data: []byte(`{"n":2}`)},
		{Stream: "s:a:9", Seq: 1, Data: []byte(`{"g":1}`), Standalone: true},
		{Stream: "s:a:7", Seq: 3, Data: []byte(`{"n":3}`), Final: true},
		{Stream: "s:a:8", Seq: 1, Data: []byte(`{"m":1}`)},
		{Stream: "s:a:8", Seq: 2, Abandoned: true},
	}
	if err := s.Append(ctx, events, ttl); err != nil {
		t.Fatal(err)
	}
	// A batch sent again (a retry) is taken without an error.
	if err := s.Append(ctx, events[:2], ttl); err != nil {
		t.Errorf("appending events again: %v", err)
	}
	for _, tc := range []struct {
		stream            string
		after             int64
		ok                bool
		data              []string
		standalone, ended bool
	}{
		{"s:a:7", 0, true, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`}, false, true},
		{"s:a:7", 2, true, []string{`{"n":3}`}, false, true},
		{"s:a:7", 3, true, nil, false, true},
		{"s:a:9", 0, true, []string{`{"g":1}`}, true, false},
		{"s:a:8", 1, true, []string{""}, false, true},
		{"s:a:6", 0, false, nil, false, false},
	} {
		t.Run(fmt.Sprintf("%s after %d", tc.stream, tc.after), func(t *testing.T) {
			st, ok, err := s.Read(ctx, tc.stream, tc.after)
			if err != nil || ok != tc.ok {
				t.Fatalf("Read: ok %v, %v; want ok %v", ok, err, tc.ok)
			}
			var data []string
			for _, e := range st.Events {
				data = append(data, string(e.Data))
			}
			if fmt.Sprint(data) != fmt.Sprint(tc.data) || st.Standalone != tc.standalone || st.Ended != tc.ended {
				t.Errorf("got %q standalone %v ended %v, want %q %v %v", data, st.Standalone, st.Ended, tc.data, tc.standalone, tc.ended)
			}
		})
	}
	if got := pttl(t, s, s.streamKey("s:a:7")); got <= 0 || got > ttl {
		t.Errorf("the stream's TTL is %v, want at most %v", got, ttl)
	}

	// A stream keeps its most recent events only.
	var many []gateway.StreamEvent
	for i := range 3 * streamMaxLen {
		many = append(many, gateway.StreamEvent{Stream: "s:b:1", Seq: int64(i + 1), Data: []byte("{}")})
	}
	if err := s.Append(ctx, many, ttl); err != nil {
		t.Fatal(err)
	}
	if n, err := redis.Int64(must(t, s, "XLEN", s.streamKey("s:b:1")), nil); err != nil || n > streamMaxLen+streamMaxLen/2 {
		t.Errorf("the stream holds %d events (%v), want about %d", n, err, streamMaxLen)
	}
	st, _, _ := s.Read(ctx, "s:b:1", 0)
	if len(st.Events) != readCount || st.Events[0].Seq == 1 {
		t.Errorf("a read from the start got %d events from %d: want %d of the most recent", len(st.Events), st.Events[0].Seq, readCount)
	}
}

// A GET stream resumes on another replica: the events the client missed
// there, then, at its next GET, the other replica's own GET stream.
func TestGETStreamResumesOnOtherReplica(t *testing.T) {
	url, _ := redisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	up := logServer(t)
	store := open(t, url)
	sealer := sealerOf(ctx, t, store)
	var urls []string
	var gws []*gateway.Gateway
	for range 2 {
		st := open(t, url)
		g, err := gateway.New([]*config.Server{up}, &gateway.Options{Replicas: &gateway.ReplicaOptions{Sealer: sealer, Store: st, Events: st}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		if err := g.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(g)
		t.Cleanup(ts.Close)
		urls, gws = append(urls, ts.URL+"/mcp"), append(gws, g)
	}
	id := initialize(t, ctx, urls[0])
	get := func(url, last string) *bufio.Reader {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			t.Fatalf("GET %s after %q: %s %s", url, last, resp.Status, body)
		}
		return bufio.NewReader(resp.Body)
	}

	// Three list_changed on replica 0's GET stream; the client reads one.
	stream := get(urls[0], "")
	gws[0].Update([]*config.Server{up})
	first := nextEvent(t, stream)
	num, _, _ := strings.Cut(first.id, "-")
	sum := sha256.Sum256([]byte(id))
	name := "s:" + hex.EncodeToString(sum[:16]) + ":" + num
	waitRecorded(t, store, name, 3)

	// Replica 1 replays the other two, then ends the response.
	stream = get(urls[1], first.id)
	var last sseEvent
	for range 2 {
		last = nextEvent(t, stream)
		if !strings.Contains(last.data, "list_changed") || last.id == first.id {
			t.Fatalf("replayed %+v after %s", last, first.id)
		}
	}
	if _, err := stream.ReadString('\n'); err != io.EOF {
		t.Errorf("the replay went on: %v", err)
	}
	// Nothing more to replay: the GET is replica 1's own stream.
	stream = get(urls[1], last.id)
	gws[1].Update([]*config.Server{up})
	if e := nextEvent(t, stream); !strings.Contains(e.data, "list_changed") {
		t.Errorf("replica 1's GET stream got %+v", e)
	}
}

// initialize opens a legacy session at url and returns its id.
func initialize(t *testing.T, ctx context.Context, url string) string {
	t.Helper()
	var id string
	for _, body := range []string{
		fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, protocol.LatestLegacyVersion),
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", protocol.LatestLegacyVersion)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s: %s", body, resp.Status)
		}
		if id == "" {
			id = resp.Header.Get("Mcp-Session-Id")
		}
	}
	return id
}

type sseEvent struct{ id, data string }

// nextEvent reads the next event that carries data.
func nextEvent(t *testing.T, br *bufio.Reader) sseEvent {
	t.Helper()
	var e sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading an event: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && e.data != "":
			return e
		case strings.HasPrefix(line, "id:"):
			e.id = strings.TrimSpace(line[3:])
		case strings.HasPrefix(line, "data:"):
			e.data += strings.TrimSpace(line[5:])
		}
	}
}

// waitRecorded waits until the store holds n events of stream: the
// replica records them a moment after it sends them.
func waitRecorded(t *testing.T, s *Store, stream string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, _, err := s.Read(context.Background(), stream, 0)
		if err == nil && len(st.Events) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store holds %d events of %s, want %d (%v)", len(st.Events), stream, n, err)
		}
	}
}
