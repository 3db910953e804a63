package streamable_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/transport/streamable"
)

// TestClosedStreamErr: a stream closed by this side answers Read and
// Write with jsonrpc.ErrClosed, as every transport does: not io.EOF,
// which says that the server ended the stream, and no request sent.
func TestClosedStreamErr(t *testing.T) {
	leakcheck.Check(t)
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer ts.Close()
	s, err := (&streamable.Transport{URL: ts.URL, Client: ts.Client()}).Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Read(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Read after Close: %v, want jsonrpc.ErrClosed", err)
	}
	if err := s.Write(t.Context(), &jsonrpc.Message{Method: "m"}); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Write after Close: %v, want jsonrpc.ErrClosed", err)
	}
	if n := posts.Load(); n != 0 {
		t.Errorf("%d requests sent after Close", n)
	}
}
