package apihttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/transport/httperr"
)

// answers serves the statuses in turn (the last one from then on), each
// with the header h; 200 is a stream of one event.
func answers(t *testing.T, h http.Header, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		for k, v := range h {
			w.Header()[k] = v
		}
		s := statuses[min(i, len(statuses)-1)]
		if s != http.StatusOK {
			w.WriteHeader(s)
			io.WriteString(w, `{"error":{"message":"attempt `+strconv.Itoa(i)+`"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ok\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Retried as the official SDKs retry: 408, 409, 429 and 5xx, unless the
// server says otherwise with x-should-retry; MaxRetries bounds the
// attempts. Retry-After-Ms: 0 keeps the test from waiting.
func TestRetries(t *testing.T) {
	now := http.Header{"Retry-After-Ms": {"0"}}
	cases := []struct {
		name       string
		header     http.Header
		statuses   []int
		maxRetries int
		attempts   int32
		status     int // of the error; 0: the stream
	}{
		{"503 then ok", now, []int{503, 200}, 2, 2, 0},
		{"429 to the end", now, []int{429}, 2, 3, 429},
		{"408 and 409", now, []int{408, 409, 200}, 2, 3, 0},
		{"400 is not retried", now, []int{400, 200}, 2, 1, 400},
		{"never", now, []int{500, 200}, 0, 1, 500},
		{"x-should-retry false", http.Header{"Retry-After-Ms": {"0"}, "X-Should-Retry": {"false"}}, []int{500, 200}, 2, 1, 500},
		{"x-should-retry true", http.Header{"Retry-After-Ms": {"0"}, "X-Should-Retry": {"true"}}, []int{400, 200}, 2, 2, 0},
		{"a wait over two minutes", http.Header{"Retry-After": {"3600"}}, []int{503, 200}, 2, 1, 503},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := answers(t, tc.header, tc.statuses...)
			c := &Client{HTTP: HTTPClient(nil), URL: srv.URL, MaxRetries: tc.maxRetries}
			s, err := c.Stream(context.Background(), []byte(`{}`))
			if got := n.Load(); got != tc.attempts {
				t.Errorf("%d attempts, want %d", got, tc.attempts)
			}
			if tc.status == 0 {
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if e, err := s.Next(); err != nil || string(e.Data) != "ok" {
					t.Errorf("event %q %v", e.Data, err)
				}
				return
			}
			var se *StatusError
			if !errors.As(err, &se) || se.Status != tc.status || string(se.Body) != `{"error":{"message":"attempt `+strconv.Itoa(int(tc.attempts)-1)+`"}}` {
				t.Errorf("error %v", err)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header http.Header
		want   time.Duration
		ok     bool
	}{
		{http.Header{}, 0, false},
		{http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After": {"1e300"}}, maxRetryAfter + 1, true},
		{http.Header{"Retry-After": {"-1"}}, 0, false},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
	}
	for _, tc := range cases {
		if d, ok := retryAfter(tc.header, now); d != tc.want || ok != tc.ok {
			t.Errorf("%v: %v %v, want %v %v", tc.header, d, ok, tc.want, tc.ok)
		}
	}
	for attempt := range 12 {
		want := min(initialBackoff<<attempt, maxBackoff)
		if d := backoff(attempt); d > want || d < want*3/4 {
			t.Errorf("backoff(%d) = %v, want %v less up to a quarter", attempt, d, want)
		}
	}
}

// A redirect to another origin is refused (the key would go with it),
// and not retried; one on the endpoint's origin is followed.
func TestRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	t.Cleanup(other.Close)
	var attempts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts.Add(1)
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/v1", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/v1", http.StatusPermanentRedirect)
		default:
			if r.Header.Get("X-Api-Key") != "k" || r.Method != http.MethodPost {
				http.Error(w, "lost the key", http.StatusTeapot)
				return
			}
			io.WriteString(w, "data: here\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	c := &Client{HTTP: HTTPClient(nil), URL: srv.URL + "/away", Header: http.Header{"X-Api-Key": {"k"}}, MaxRetries: 2}
	_, err := c.Stream(context.Background(), []byte(`{}`))
	var re *httperr.RedirectError
	if !errors.As(err, &re) || elsewhere.Load() != 0 || attempts.Load() != 1 {
		t.Errorf("redirect away: %v, %d attempts, %d requests elsewhere", err, attempts.Load(), elsewhere.Load())
	}
	c.URL = srv.URL + "/moved"
	s, err := c.Stream(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if e, err := s.Next(); err != nil || string(e.Data) != "here" {
		t.Errorf("event %q %v", e.Data, err)
	}
}

func TestEndpoint(t *testing.T) {
	cases := []struct{ base, path, want string }{
		{"https://api.openai.com/v1/", "chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"http://127.0.0.1:11434/v1", "chat/completions", "http://127.0.0.1:11434/v1/chat/completions"},
		{"https://api.anthropic.com/", "v1/messages", "https://api.anthropic.com/v1/messages"},
		{"http://127.0.0.1:8080", "v1/messages", "http://127.0.0.1:8080/v1/messages"},
		{"http://[::1]:8000/api/v1//", "chat/completions", "http://[::1]:8000/api/v1//chat/completions"},
		{"127.0.0.1:11434/v1", "chat/completions", ""},
		{"localhost:11434", "chat/completions", ""},
		{"ftp://example.com/v1", "chat/completions", ""},
		{"http:///v1", "chat/completions", ""},
	}
	for _, tc := range cases {
		got, err := Endpoint(tc.base, tc.path)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("Endpoint(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
		}
	}
}

func TestShortText(t *testing.T) {
	cases := map[string]string{
		"404 page not found\n":           "404 page not found",
		"<html><body>Bad gateway</body>": "",
		"\x1b[2Jcleared":                 "",
		string(make([]byte, 300)):        "",
		"\xff\xfe":                       "",
	}
	for body, want := range cases {
		if got := ShortText([]byte(body)); got != want {
			t.Errorf("ShortText(%q) = %q, want %q", body, got, want)
		}
	}
}
