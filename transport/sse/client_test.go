package sse_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/httperr"
	"github.com/ferrymcp/ferry/transport/sse"
)

// fakeServer answers GET /sse with the given stream start, then holds the
// stream open until the request ends; POSTs are recorded.
type fakeServer struct {
	status int
	ctype  string
	start  string
	end    bool // end the stream after start

	mu      sync.Mutex
	headers []http.Header
	posts   []string
	postTo  []string
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	if r.Method == "POST" {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts = append(f.posts, string(b))
		f.postTo = append(f.postTo, r.URL.RequestURI())
		f.mu.Unlock()
		if strings.Contains(r.URL.RawQuery, "fail") {
			http.Error(w, "no such thing", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if f.status == 0 {
		f.status = 200
	}
	if f.ctype == "" {
		f.ctype = "text/event-stream"
	}
	w.Header().Set("Content-Type", f.ctype)
	w.WriteHeader(f.status)
	io.WriteString(w, f.start)
	w.(http.Flusher).Flush()
	if f.status == 200 && !f.end {
		<-r.Context().Done()
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name   string
		fake   *fakeServer
		url    string // path, or a full URL when it has a scheme
		check  func(t *testing.T, err error)
		wantOK string // the endpoint a POST must reach, when Open succeeds
	}{
		{name: "relative endpoint", fake: &fakeServer{start: "event: endpoint\ndata: message?sessionId=abc\n\n"}, url: "/mcp/sse", wantOK: "/mcp/message?sessionId=abc"},
		{name: "absolute path", fake: &fakeServer{start: ": hi\n\nevent: endpoint\r\ndata: /m?s=1\r\n\r\n"}, url: "/sse", wantOK: "/m?s=1"},
		{name: "same-origin absolute URL", fake: &fakeServer{start: "event: endpoint\ndata: {{BASE}}/post\n\n"}, url: "/sse", wantOK: "/post"},
		{name: "cross-origin endpoint", fake: &fakeServer{start: "event: endpoint\ndata: http://evil.example/message\n\n"}, url: "/sse",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "origin differs") {
					t.Errorf("error %v", err)
				}
			}},
		{name: "another port", fake: &fakeServer{start: "event: endpoint\ndata: http://127.0.0.1:1/message\n\n"}, url: "/sse",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "origin differs") {
					t.Errorf("error %v", err)
				}
			}},
		{name: "message first", fake: &fakeServer{start: "event: message\ndata: {}\n\n"}, url: "/sse",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, sse.ErrNoEndpoint) || !strings.Contains(err.Error(), `"message"`) {
					t.Errorf("error %v", err)
				}
			}},
		{name: "stream ends", fake: &fakeServer{end: true, start: "data: x"}, url: "/sse",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, sse.ErrNoEndpoint) {
					t.Errorf("error %v", err)
				}
			}},
		{name: "not found", fake: &fakeServer{status: 404, ctype: "text/plain", start: "no SSE here"}, url: "/sse",
			check: func(t *testing.T, err error) {
				var se *httperr.StatusError
				if !errors.As(err, &se) || se.StatusCode != 404 || se.Body != "no SSE here" {
					t.Errorf("error %v", err)
				}
			}},
		{name: "not an event stream", fake: &fakeServer{ctype: "application/json", start: "{}"}, url: "/sse",
			check: func(t *testing.T, err error) {
				if !errors.Is(err, sse.ErrNoEndpoint) || !strings.Contains(err.Error(), "application/json") {
					t.Errorf("error %v", err)
				}
			}},
		{name: "bad scheme", url: "ftp://example.com/sse",
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "not http") {
					t.Errorf("error %v", err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leakcheck.Check(t)
			if tt.fake == nil {
				tt.fake = &fakeServer{}
			}
			ts := httptest.NewServer(tt.fake)
			defer ts.Close()
			tt.fake.start = strings.ReplaceAll(tt.fake.start, "{{BASE}}", ts.URL)
			u := tt.url
			if !strings.Contains(u, "://") {
				u = ts.URL + u
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			tr := &sse.Transport{URL: u, Client: ts.Client(), Header: http.Header{"Authorization": {"Bearer x"}}}
			stream, err := tr.Open(ctx)
			if tt.check != nil {
				if stream != nil {
					stream.Close()
				}
				tt.check(t, err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			if err := stream.Write(ctx, &jsonrpc.Message{Method: "ping", ID: jsonrpc.Int64ID(1)}); err != nil {
				t.Fatal(err)
			}
			tt.fake.mu.Lock()
			defer tt.fake.mu.Unlock()
			if len(tt.fake.posts) != 1 || tt.fake.posts[0] != `{"jsonrpc":"2.0","id":1,"method":"ping"}` || tt.fake.postTo[0] != tt.wantOK {
				t.Errorf("posts %q to %q, want one to %s", tt.fake.posts, tt.fake.postTo, tt.wantOK)
			}
			for _, h := range tt.fake.headers {
				if h.Get("Authorization") != "Bearer x" {
					t.Errorf("header not sent: %v", h)
				}
			}
		})
	}
}

func TestOpenTimeout(t *testing.T) {
	leakcheck.Check(t)
	ts := httptest.NewServer(&fakeServer{start: ": nothing yet\n\n"})
	defer ts.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := (&sse.Transport{URL: ts.URL + "/sse", Client: ts.Client()}).Open(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a deadline", err)
	}
}

func TestWriteErrors(t *testing.T) {
	leakcheck.Check(t)
	ts := httptest.NewServer(&fakeServer{start: "event: endpoint\ndata: /message?fail=1\n\n"})
	defer ts.Close()
	stream, err := (&sse.Transport{URL: ts.URL + "/sse", Client: ts.Client()}).Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	err = stream.Write(t.Context(), &jsonrpc.Message{Method: "x"})
	var se *httperr.StatusError
	if !errors.As(err, &se) || se.StatusCode != 500 || se.Method != "POST" || !strings.Contains(err.Error(), "no such thing") {
		t.Errorf("error %v", err)
	}
	stream.Close()
	if err := stream.Write(t.Context(), &jsonrpc.Message{Method: "x"}); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("write after close: %v, want jsonrpc.ErrClosed", err)
	}
	if _, err := stream.Read(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("read after close: %v, want jsonrpc.ErrClosed", err)
	}
}

func TestRedirects(t *testing.T) {
	leakcheck.Check(t)
	other := httptest.NewServer(&fakeServer{start: "event: endpoint\ndata: /message\n\n"})
	defer other.Close()
	mux := http.NewServeMux()
	mux.Handle("/old", http.RedirectHandler("/sse", http.StatusFound))
	mux.Handle("/away", http.RedirectHandler(other.URL+"/sse", http.StatusFound))
	mux.Handle("/", &fakeServer{start: "event: endpoint\ndata: message\n\n"})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	stream, err := (&sse.Transport{URL: ts.URL + "/old", Client: ts.Client()}).Open(t.Context())
	if err != nil {
		t.Fatalf("same-origin redirect: %v", err)
	}
	stream.Close()
	if _, err := (&sse.Transport{URL: ts.URL + "/away", Client: ts.Client()}).Open(t.Context()); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("cross-origin redirect: %v", err)
	}
}

// TestServerEndsStream: the server ending the event stream ends the
// client's connection.
func TestServerEndsStream(t *testing.T) {
	leakcheck.Check(t)
	ts, h := serve(t, testServer(nil), nil)
	c := connect(t, ts.URL+"/sse", ts.Client(), &client.Options{ProtocolVersion: protocol.Version20241105})
	h.Close()
	deadline := time.Now().Add(5 * time.Second)
	for c.Ping(t.Context()) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the client did not notice the end of the stream")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestClientTimeout: the http.Client's Timeout bounds POSTs, not the
// event stream.
func TestClientTimeout(t *testing.T) {
	leakcheck.Check(t)
	ts, _ := serve(t, testServer(nil), nil)
	hc := *ts.Client()
	hc.Timeout = 100 * time.Millisecond
	c := connect(t, ts.URL+"/sse", &hc, &client.Options{ProtocolVersion: protocol.Version20241105})
	time.Sleep(300 * time.Millisecond)
	if err := c.Ping(t.Context()); err != nil {
		t.Fatalf("ping after the client timeout: %v", err)
	}
}
