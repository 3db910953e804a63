// Package apihttp is what the provider packages share to call a model's
// HTTP API: a JSON request POSTed and answered with an event stream,
// retried as the providers' official SDKs retry, over an HTTP client that
// never takes the credentials to another origin.
//
// The provider packages use it instead of the official SDKs, whose
// generated code for every API of the provider tripled the size of the
// ferry command and the time and memory its build takes.
package apihttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/ferrymcp/ferry/internal/redirect"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/transport/httperr"
)

// DefaultMaxRetries is how often a failed request is retried when the
// options say nothing, as in the official SDKs.
const DefaultMaxRetries = 2

// Retries reads a provider's MaxRetries option: zero is
// DefaultMaxRetries, a negative number none.
func Retries(n int) int {
	if n == 0 {
		return DefaultMaxRetries
	}
	return max(n, 0)
}

// responseHeaderTimeout bounds the wait for an answer's headers (not for
// its stream) with the default HTTP client, as Anthropic's SDK does: a
// server that accepts the connection and never answers does not hang the
// agent.
const responseHeaderTimeout = 10 * time.Minute

// maxErrorBody bounds what is read of an answer with an error status.
const maxErrorBody = 64 << 10

// Retry delays: the SDKs' exponential backoff, and the longest wait a
// server may ask for with Retry-After before the error is returned
// instead.
const (
	initialBackoff = 500 * time.Millisecond
	maxBackoff     = 8 * time.Second
	maxRetryAfter  = 2 * time.Minute
)

// HTTPClient returns the client the requests go through: c (nil: one
// like http.DefaultClient with a bound on the wait for the answer's
// headers) whose redirects stay on the endpoint's origin, where the key
// may go.
func HTTPClient(c *http.Client) *http.Client {
	if c == nil {
		c = defaultClient()
	}
	return redirect.Client(c, &redirect.Policy{})
}

// The default client is shared by the models, and so are its idle
// connections: a chat that switches models does not leave a pool behind
// each time. It is made when first used, not at every start of the
// command.
var (
	defaultOnce sync.Once
	defaultHTTP *http.Client
)

func defaultClient() *http.Client {
	defaultOnce.Do(func() {
		defaultHTTP = &http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			t = t.Clone()
			t.ResponseHeaderTimeout = responseHeaderTimeout
			defaultHTTP.Transport = t
		}
	})
	return defaultHTTP
}

// Endpoint parses an API's base URL and joins path to it: base must be an
// http or https URL. A base with a trailing slash or without one gives
// the same endpoint.
func Endpoint(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("the base URL must be an http or https URL with a host, such as http://127.0.0.1:11434/v1")
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + path
	u.RawPath = ""
	return u.String(), nil
}

// Client sends requests to one endpoint.
type Client struct {
	HTTP *http.Client
	// URL is the endpoint.
	URL string
	// Header goes with every request (the credentials, the API version).
	Header http.Header
	// MaxRetries is how often a request that failed is tried again: when
	// no connection could be made, or the server answered 408, 409, 429
	// or 5xx (or asked for it with x-should-retry).
	MaxRetries int
}

// StatusError is an answer with an HTTP error status.
type StatusError struct {
	Status int
	// Body is the start of the answer, what the provider said.
	Body []byte
}

func (e *StatusError) Error() string {
	return "HTTP " + strconv.Itoa(e.Status) + ": " + http.StatusText(e.Status)
}

// Stream is the event stream that answered a request.
type Stream struct {
	*ssewire.Reader
	body io.Closer
}

// Close ends the stream.
func (s *Stream) Close() error { return s.body.Close() }

// Stream POSTs body (JSON) and returns the event stream of the answer.
// A failure before the stream starts is retried; an answer with an error
// status is a *StatusError.
func (c *Client) Stream(ctx context.Context, body []byte) (*Stream, error) {
	for attempt := 0; ; attempt++ {
		resp, err := c.send(ctx, body)
		if ctx.Err() != nil {
			closeBody(resp)
			return nil, context.Cause(ctx)
		}
		if err == nil && resp.StatusCode < 300 {
			return &Stream{Reader: ssewire.NewReader(resp.Body, 0), body: resp.Body}, nil
		}
		delay, retry := retryDelay(resp, err, attempt)
		if !retry || attempt >= c.MaxRetries {
			return nil, failure(resp, err)
		}
		closeBody(resp)
		if err := wait(ctx, delay); err != nil {
			return nil, err
		}
	}
}

func (c *Client) send(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	return c.HTTP.Do(req)
}

// failure is the error of a last attempt: the transport's, or the answer
// with its error status.
func failure(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &StatusError{Status: resp.StatusCode, Body: b}
}

func closeBody(resp *http.Response) {
	if resp != nil {
		resp.Body.Close()
	}
}

// retryDelay tells whether a failed attempt may be retried, and after
// how long: what the server asked for (Retry-After-Ms, Retry-After in
// seconds or as a date; a wait over maxRetryAfter is not waited), else
// the backoff of the attempt, less up to a quarter of it at random.
func retryDelay(resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		// A refused redirect would be refused again.
		var re *httperr.RedirectError
		return backoff(attempt), !errors.As(err, &re)
	}
	if !retryable(resp) {
		return 0, false
	}
	if d, ok := retryAfter(resp.Header, time.Now()); ok {
		return d, d <= maxRetryAfter
	}
	return backoff(attempt), true
}

func retryable(resp *http.Response) bool {
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := resp.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

func backoff(attempt int) time.Duration {
	d := min(initialBackoff<<min(attempt, 8), maxBackoff)
	return d - rand.N(d/4)
}

// retryAfter reads the wait a server asked for.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
		return durationOf(ms, time.Millisecond), true
	}
	v := h.Get("Retry-After")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return durationOf(s, time.Second), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// durationOf is n units, or more than maxRetryAfter when n is too large
// for a Duration.
func durationOf(n float64, unit time.Duration) time.Duration {
	if n > float64(maxRetryAfter/unit) {
		return maxRetryAfter + 1
	}
	return time.Duration(n * float64(unit))
}

func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// maxShortText bounds what [ShortText] keeps.
const maxShortText = 200

// ShortText is body as the message of an error when it is short text
// (a proxy's "404 page not found"), else empty: not a page of HTML, not
// bytes that are not UTF-8 or hold control characters (which a terminal
// would obey).
func ShortText(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > maxShortText || !utf8.ValidString(s) || strings.HasPrefix(s, "<") || strings.ContainsFunc(s, unicode.IsControl) {
		return ""
	}
	return s
}
