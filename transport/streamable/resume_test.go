package streamable_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/internal/pipenet"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/httperr"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// refusal is how a server refuses a GET: its status, Content-Type and
// body, and whether it names the session in Mcp-Session-Id.
type refusal struct {
	status      int
	contentType string
	body        string
	echoSession bool
}

// The refusals servers send, word for word.
var (
	// transport/streamablehandler, for a Last-Event-ID it does not know
	// (its events expired, or were another replica's and the gateway's
	// store no longer has them).
	ferryUnknownEvent = refusal{404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"unknown or expired event id \"1-1\""}}`, true}
	// transport/streamablehandler, for a session it does not know.
	ferrySessionNotFound = refusal{404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"session not found"}}`, false}
	// The gateway (gateway/share.go), for a session that expired.
	gatewaySessionExpired = refusal{404, "text/plain; charset=utf-8", "session expired: send initialize again\n", false}
	// The TypeScript SDK's server, whose event store does not know the id
	// (webStandardStreamableHttp.js, replayEvents).
	tsUnknownEvent = refusal{400, "application/json", `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Invalid event ID format"},"id":null}`, false}
)

func (f refusal) write(w http.ResponseWriter, sid string) {
	if f.echoSession {
		w.Header().Set("Mcp-Session-Id", sid)
	}
	w.Header().Set("Content-Type", f.contentType)
	w.WriteHeader(f.status)
	io.WriteString(w, f.body)
}

// forgetfulServer is a legacy server whose sessions' GET streams cannot be
// resumed: the first GET stream of a session sends one message with an
// event id and ends; a GET with Last-Event-ID gets onResume; and a fresh
// GET gets a log message naming its session, and stays open. With
// endSession, the first session ended when its first GET stream did.
type forgetfulServer struct {
	onResume   refusal
	endSession bool

	mu       sync.Mutex
	sessions int // initialize requests
	gets     map[string]int
	resumes  []string // the Last-Event-ID of each resuming GET
}

func (s *forgetfulServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		s.post(w, r)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	s.mu.Lock()
	current := fmt.Sprint("s", s.sessions)
	ended := sid != current || s.endSession && sid == "s1" && s.gets[sid] > 0
	n := s.gets[sid] + 1
	s.gets[sid] = n
	last := r.Header.Get("Last-Event-ID")
	if last != "" {
		s.resumes = append(s.resumes, last)
	}
	s.mu.Unlock()
	switch {
	case ended && last == "":
		gatewaySessionExpired.write(w, sid)
	case last != "":
		s.onResume.write(w, sid)
	case sid == "s1" && n == 1:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: 1-1\nretry: 1000\ndata: %s\n\n", logNote("first in "+sid))
	default:
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", logNote("fresh in "+sid))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

func (s *forgetfulServer) post(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), `"initialize"`) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.mu.Lock()
	s.sessions++
	w.Header().Set("Mcp-Session-Id", fmt.Sprint("s", s.sessions))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"forgetful","version":"1"}}}`)
}

func logNote(text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%q}}`, text)
}

// logBuffer is a slog destination that tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// connectInBubble connects a client through tr to h over in-memory
// connections, inside the synctest bubble of the caller.
func connectInBubble(t *testing.T, h http.Handler, tr *streamable.Transport, opts *client.Options) (*client.Client, func()) {
	l := pipenet.Listen()
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return l.Dial(), nil
	}}}
	tr.URL, tr.Client = "http://127.0.0.1/mcp", hc
	opts.ProtocolVersion = protocol.Version20251125
	c, err := client.Connect(context.Background(), tr, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, func() {
		c.Close()
		srv.Close()
		hc.CloseIdleConnections()
	}
}

// TestGETStreamNotResumable: a server that cannot resume the legacy GET
// stream from its Last-Event-ID (the events expired, the replica that
// kept them is gone, or it keeps none) refuses it whenever asked. The
// client asks once, then opens a fresh GET stream at once and hears what
// the server sends on it; the messages missed are logged as lost. When
// the fresh GET is refused with 404, the session ended: the client opens
// a new one, as it does when a POST meets that 404. (On b211c63 the client
// asked five times with the same id, about a minute, and then had no GET
// stream for the rest of the session.)
func TestGETStreamNotResumable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		onResume     refusal
		endSession   bool
		noReinit     bool
		want         string // the log message that arrives, "" for none
		wantSessions int
		wantLog      string
	}{
		{"ferry: unknown or expired event id", ferryUnknownEvent, false, false, "fresh in s1", 1, "messages it sent since are lost"},
		{"typescript: event id unknown to the store", tsUnknownEvent, false, false, "fresh in s1", 1, "messages it sent since are lost"},
		{"ferry: session not found", ferrySessionNotFound, true, false, "fresh in s2", 2, "messages it sent since are lost"},
		{"gateway: session expired", gatewaySessionExpired, true, false, "fresh in s2", 2, "messages it sent since are lost"},
		{"session ended, DisableReinitialize", ferrySessionNotFound, true, true, "", 1, "the server ended the session; the GET stream stops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			synctest.Test(t, func(t *testing.T) {
				srv := &forgetfulServer{onResume: tc.onResume, endSession: tc.endSession, gets: map[string]int{}}
				var logs logBuffer
				notes := make(chan string, 8)
				tr := &streamable.Transport{DisableReinitialize: tc.noReinit, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
				_, stop := connectInBubble(t, srv, tr, &client.Options{OnLog: func(p *protocol.LoggingMessageParams) {
					notes <- fmt.Sprint(p.Data)
				}})
				defer stop()
				if got := <-notes; got != "first in s1" {
					t.Fatalf("first message %q", got)
				}
				got := ""
				select {
				case got = <-notes:
				case <-time.After(10 * time.Second):
				}
				synctest.Wait()
				srv.mu.Lock()
				resumes, sessions, gets := srv.resumes, srv.sessions, srv.gets
				srv.mu.Unlock()
				if got != tc.want {
					t.Errorf("after the refused resumption, the client heard %q within 10 s; want %q", got, tc.want)
				}
				if len(resumes) != 1 || resumes[0] != "1-1" {
					t.Errorf("resuming GETs with Last-Event-ID %q; want one, with 1-1", resumes)
				}
				if sessions != tc.wantSessions {
					t.Errorf("%d sessions opened, want %d", sessions, tc.wantSessions)
				}
				if tc.noReinit && gets["s1"] != 3 {
					t.Errorf("%d GETs in the ended session; want 3 (first, resuming, fresh), then none", gets["s1"])
				}
				if !strings.Contains(logs.String(), tc.wantLog) {
					t.Errorf("the client's log does not say %q:\n%s", tc.wantLog, logs.String())
				}
			})
		})
	}
}

// TestRequestStreamNotResumable: the stream answering a request ends
// before its response, and the server refuses to resume it. The call
// fails at once, its error naming the request and saying that its
// response is lost, with the server's refusal; the session goes on.
func TestRequestStreamNotResumable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		onResume refusal
	}{
		{"ferry: unknown or expired event id", ferryUnknownEvent},
		{"typescript: event id unknown to the store", tsUnknownEvent},
		{"gateway: session expired", gatewaySessionExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakcheck.Check(t)
			synctest.Test(t, func(t *testing.T) {
				var resumes atomic.Int32
				h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					w.Header().Set("Mcp-Session-Id", "s1")
					switch {
					case r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "":
						resumes.Add(1)
						tc.onResume.write(w, "s1")
					case r.Method == http.MethodGet:
						w.WriteHeader(http.StatusMethodNotAllowed)
					case strings.Contains(string(body), `"initialize"`):
						w.Header().Set("Content-Type", "application/json")
						io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"cut","version":"1"}}}`)
					case strings.Contains(string(body), `"tools/call"`):
						// The priming event, then the connection ends.
						w.Header().Set("Content-Type", "text/event-stream")
						io.WriteString(w, "id: 7-0\nretry: 100\ndata: \n\n")
					default:
						w.WriteHeader(http.StatusAccepted)
					}
				})
				c, stop := connectInBubble(t, h, &streamable.Transport{}, &client.Options{})
				defer stop()
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				start := time.Now()
				_, err := c.Call(ctx, "slow", nil)
				var se *httperr.StatusError
				if err == nil || !errors.As(err, &se) || se.StatusCode != tc.onResume.status {
					t.Fatalf("call: %v; want the refusal (%d)", err, tc.onResume.status)
				}
				for _, want := range []string{"tools/call", `could not resume`, `"7-0"`, "the response is lost"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if d := time.Since(start); d > time.Second || resumes.Load() != 1 {
					t.Errorf("the call failed after %v and %d resuming GETs; want at once, after one", d, resumes.Load())
				}
			})
		})
	}
}

// TestRequestStreamNotResumableByHandler: against ferry's own handler,
// whose event store no longer knows the stream (here: the Last-Event-ID
// is one of a stream it never had, as after the gateway's store expired
// it), a call whose stream was cut fails at once naming the request, and
// the session is not taken for ended: the next call goes through in it.
func TestRequestStreamNotResumableByHandler(t *testing.T) {
	leakcheck.Check(t)
	s := testServer()
	resumed := make(chan struct{})
	server.AddTool(s, &protocol.Tool{Name: "cut"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		req.Progress(ctx, 1, 2, "before")
		select { // the response, once it can no longer reach the client
		case <-resumed:
		case <-ctx.Done():
		}
		return "done", nil
	})
	h := streamablehandler.New(s, &streamablehandler.Options{Retry: 20 * time.Millisecond})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Last-Event-ID") != "" {
			r.Header.Set("Last-Event-ID", "999999-1") // expired
			defer close(resumed)
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	defer h.Close()
	hc := &http.Client{Transport: cutAfterProgress{http.DefaultTransport}}
	c := connectHTTP(t, ts.URL, &client.Options{ProtocolVersion: protocol.Version20251125}, &streamable.Transport{DisableGETStream: true, Client: hc})
	// With a progress token, the request is answered on an event stream.
	ctx := client.WithProgress(context.Background(), func(*protocol.ProgressParams) {})
	_, err := c.Call(ctx, "cut", nil)
	var se *httperr.StatusError
	if err == nil || !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || !strings.Contains(err.Error(), "could not resume the stream answering tools/call") {
		t.Fatalf("call: %v; want the 404 of the resumption, naming tools/call", err)
	}
	if h.Sessions() != 1 {
		t.Fatalf("%d sessions after the refused resumption, want 1", h.Sessions())
	}
	res, err := c.Call(context.Background(), "echo", map[string]string{"message": "still here"})
	if err != nil || res.Content[0].Text != "still here" || h.Sessions() != 1 {
		t.Fatalf("the next call: %v %v, %d sessions", res, err, h.Sessions())
	}
}

// cutAfterProgress cuts the event streams that answer POSTs after their
// first progress notification, as a network that fails would.
type cutAfterProgress struct{ http.RoundTripper }

func (c cutAfterProgress) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.RoundTripper.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &cutBody{rd: bufio.NewReader(resp.Body), c: resp.Body}
	}
	return resp, err
}

// cutBody passes on lines until the event with a progress notification,
// then ends.
type cutBody struct {
	rd      *bufio.Reader
	c       io.Closer
	cut     bool
	pending []byte
}

func (b *cutBody) Read(p []byte) (int, error) {
	if len(b.pending) == 0 {
		if b.cut {
			return 0, io.EOF
		}
		line, err := b.rd.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		if bytes.Contains(line, []byte("notifications/progress")) {
			line = append(line, '\n') // the blank line that ends the event
			b.cut = true
		}
		b.pending = line
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

func (b *cutBody) Close() error { return b.c.Close() }

// outageServer is a legacy server whose GETs fail with 503 while it is
// down; otherwise a GET stream gets a log message and stays open. It
// answers pings.
type outageServer struct {
	down atomic.Bool
	gets atomic.Int32
}

func (s *outageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Mcp-Session-Id", "s1")
	if r.Method == http.MethodGet {
		n := s.gets.Add(1)
		if s.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", logNote(fmt.Sprint("GET ", n)))
		w.(http.Flusher).Flush()
		if n > 1 {
			<-r.Context().Done()
		}
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(r.Body)
	json.Unmarshal(body, &m)
	switch m.Method {
	case "initialize":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"outage","version":"1"}}}`)
	case "ping":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// TestGETStreamReopensAfterOutage: a GET stream that failed so often that
// the client stopped asking (an outage of the server's GETs of a minute)
// is opened again once the server answers a request. (On b211c63 it was
// gone for the rest of the session.)
func TestGETStreamReopensAfterOutage(t *testing.T) {
	leakcheck.Check(t)
	synctest.Test(t, func(t *testing.T) {
		srv := &outageServer{}
		notes := make(chan string, 8)
		c, stop := connectInBubble(t, srv, &streamable.Transport{}, &client.Options{OnLog: func(p *protocol.LoggingMessageParams) {
			notes <- fmt.Sprint(p.Data)
		}})
		defer stop()
		if got := <-notes; got != "GET 1" {
			t.Fatalf("first message %q", got)
		}
		srv.down.Store(true)
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		failed := srv.gets.Load()
		srv.down.Store(false)
		time.Sleep(5 * time.Minute)
		if srv.gets.Load() != failed {
			t.Fatalf("%d GETs during the outage, %d after it; want none after the client stopped asking", failed, srv.gets.Load()-failed)
		}
		if err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-notes:
			if want := fmt.Sprint("GET ", failed+1); got != want {
				t.Errorf("after the outage, heard %q; want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("after the outage and a request answered, no GET stream within 10 s (%d GETs)", srv.gets.Load())
		}
	})
}
