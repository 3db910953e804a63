package streamablehandler_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// TestCloseStreamEndsResponse: a tool that closes its request's stream
// and goes on working ends the POST's HTTP response at once, with a retry
// hint (SEP-1699 polling), not when the tool returns; the response the
// tool gives afterwards reaches the client's GET with Last-Event-ID.
func TestCloseStreamEndsResponse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		progress bool // the tool sends a notification before closing
	}{{"json until closed", false}, {"already streaming", true}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
			s.AddTool(&protocol.Tool{Name: "hold"}, func(ctx context.Context, req *server.Request, _ jsontext.Value) (*protocol.CallToolResult, error) {
				if tc.progress {
					req.Progress(ctx, 1, 2, "before")
				}
				if !req.CloseStream() {
					return nil, errors.New("the transport cannot close the stream")
				}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("done")}}, nil
			})
			h := streamablehandler.New(s, &streamablehandler.Options{DisableHostCheck: true, Retry: 250 * time.Millisecond})
			srv := httptest.NewServer(h)
			defer srv.Close()
			defer h.Close() // first: srv.Close waits for the handlers it cancels
			sid := openSession(t, srv.URL)

			resp := send(t, srv.URL, sid, "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","_meta":{"progressToken":"p"}}}`, "")
			r, posted := readStream(t, resp)
			if d, ok := r.Retry(); !ok || d != 250*time.Millisecond {
				t.Errorf("retry hint %v (%v), want 250ms", d, ok)
			}
			if tc.progress != (len(posted) == 1) || len(posted) > 1 {
				t.Errorf("events before the stream closed: %q", posted)
			}
			last := r.LastEventID()
			if last == "" {
				t.Fatal("no event id to resume from")
			}

			release <- struct{}{}
			_, got := readStream(t, send(t, srv.URL, sid, "GET", "", last))
			if len(got) == 0 || !isResult(got[len(got)-1]) {
				t.Errorf("resumed events %q, want the tool's result last", got)
			}
		})
	}
}

// TestCloseStreamOfResumedStream: CloseStream ends the connection that
// carries the stream at the time, a resumed GET too (announcing the
// retry delay before it ends), and does nothing when none does, rather
// than end the client's next connection at once.
func TestCloseStreamOfResumedStream(t *testing.T) {
	step, closed := make(chan struct{}), make(chan struct{})
	s := server.New(protocol.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&protocol.Tool{Name: "hold"}, func(ctx context.Context, req *server.Request, _ jsontext.Value) (*protocol.CallToolResult, error) {
		for range 3 {
			req.CloseStream()
			select {
			case closed <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			select {
			case <-step:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("done")}}, nil
	})
	h := streamablehandler.New(s, &streamablehandler.Options{DisableHostCheck: true, Retry: 250 * time.Millisecond})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close() // first: srv.Close waits for the handlers it cancels
	sid := openSession(t, srv.URL)

	post := send(t, srv.URL, sid, "POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold"}}`, "")
	<-closed // 1: ends the POST's response
	r, _ := readStream(t, post)
	last := r.LastEventID()

	get := send(t, srv.URL, sid, "GET", "", last) // connected once the headers are back
	step <- struct{}{}
	<-closed // 2: ends the resumed GET's
	r, got := readStream(t, get)
	if d, ok := r.Retry(); !ok || d != 250*time.Millisecond || len(got) != 0 {
		t.Errorf("resumed GET ended with retry %v (%v) and events %q, want 250ms and none", d, ok, got)
	}

	step <- struct{}{}
	<-closed // 3: no connection carries the stream: nothing to end
	get = send(t, srv.URL, sid, "GET", "", last)
	step <- struct{}{}
	if _, got = readStream(t, get); len(got) != 1 || !isResult(got[0]) {
		t.Errorf("events %q after the last CloseStream, want the tool's result", got)
	}
}

// readStream reads an event stream until it ends, which must be soon: a
// stream left open fails the test. It returns the reader (for its last
// event id and retry delay) and the data of the events.
func readStream(t *testing.T, resp *http.Response) (*ssewire.Reader, []string) {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %q %s, want an event stream", resp.Request.Method, resp.StatusCode, ct, b)
	}
	r := ssewire.NewReader(resp.Body, 0)
	var data []string
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			e, err := r.Next()
			if err != nil {
				return
			}
			if len(e.Data) > 0 {
				data = append(data, string(e.Data))
			}
		}
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second): // a bound, not a figure: the stream ends at once
		resp.Body.Close()
		<-ended
		t.Fatalf("the response to %s did not end while the tool runs on after CloseStream", resp.Request.Method)
	}
	return r, data
}

// isResult reports whether an event is the hold tool's result.
func isResult(data string) bool {
	return strings.Contains(data, `"id":7,"result"`) && strings.Contains(data, `"done"`)
}

// openSession opens a legacy session and completes its handshake.
func openSession(t *testing.T, url string) string {
	t.Helper()
	resp := send(t, url, "", "POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	resp = send(t, url, sid, "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return sid
}

// send makes one request of a legacy session.
func send(t *testing.T, url, sid, method, body, lastEventID string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
