// Package otlp exports OpenTelemetry spans over OTLP/HTTP, in protobuf,
// to a collector or any OTLP receiver: an [sdktrace.SpanExporter] for a
// tracer provider's batcher, configured by hand ([Options]) or by the
// standard OTEL_EXPORTER_OTLP_* variables ([OptionsFromEnv]).
//
// It does what the OpenTelemetry SDK's otlptracehttp exporter does for
// traces (grouping by resource and scope, gzip, headers, a timeout for
// each export, retries when the receiver says it is busy, partial
// successes reported) without linking gRPC, which that exporter's
// generated collector package brings into every program that uses it
// (open-telemetry/opentelemetry-go#2579): a third of the packages of the
// ferry command, each initialised at every start.
package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Options configure an [Exporter]. Endpoint is required; the zero value
// of every other field works.
type Options struct {
	// Endpoint is the URL spans are posted to, path included (a
	// collector's is "http://HOST:4318/v1/traces").
	Endpoint string
	// Headers are sent with every export (an API key, say). They are
	// never written to an error.
	Headers map[string]string
	// Timeout bounds each export, its retries included; zero means 10 s.
	Timeout time.Duration
	// Gzip compresses the exports.
	Gzip bool
	// Client sends the exports; nil means a client of its own, with
	// http.DefaultTransport's settings.
	Client *http.Client
}

// DefaultTimeout is the time an export may take when Options.Timeout is
// zero, as the OTLP exporter specification sets it.
const DefaultTimeout = 10 * time.Second

// maxResponse bounds what is read of a receiver's answer.
const maxResponse = 64 << 10

// Exporter posts spans to an OTLP/HTTP receiver. Its methods are safe for
// concurrent use.
type Exporter struct {
	endpoint *url.URL
	shown    string // the endpoint without its user information, for errors
	opts     Options
	client   *http.Client
	stopped  atomic.Bool
}

// New returns an exporter to o.Endpoint.
func New(o Options) (*Exporter, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otlp: the endpoint must be an http or https URL, not %q", redact(o.Endpoint))
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	c := o.Client
	if c == nil {
		c = &http.Client{Transport: newTransport()}
	}
	return &Exporter{endpoint: u, shown: redact(o.Endpoint), opts: o, client: c}, nil
}

// ExportSpans posts spans in one request, retrying while the receiver
// answers that it is busy (429, 502, 503, 504), within the timeout.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Load() {
		return errors.New("otlp: the exporter is shut down")
	}
	if len(spans) == 0 {
		return nil
	}
	body, err := e.encode(spans)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	return e.post(ctx, body)
}

// Shutdown stops the exporter: later exports fail. Exports under way
// finish or time out.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.stopped.Store(true)
	e.client.CloseIdleConnections()
	return ctx.Err()
}

func (e *Exporter) encode(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	msg := appendRequest(nil, spans)
	if !e.opts.Gzip {
		return msg, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(msg); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// post sends body until it is taken, refused for good, or ctx ends.
func (e *Exporter) post(ctx context.Context, body []byte) error {
	for attempt := 0; ; attempt++ {
		wait, err := e.send(ctx, body)
		if wait < 0 {
			return err
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return fmt.Errorf("%w; no time left to try again", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w; %w", err, ctx.Err())
		case <-t.C:
		}
	}
}

// backoff is the wait before retry attempt+1 when the receiver did not
// say how long: from half a second, doubling up to 8 s, with jitter so
// that exporters refused together do not come back together.
func backoff(attempt int) time.Duration {
	d := 500 * time.Millisecond << min(attempt, 4)
	return d/2 + rand.N(d/2)
}

// send makes one attempt. It returns a negative wait when there is no
// point in trying again (success among them), zero to retry after the
// usual back-off, or the wait the receiver asked for.
func (e *Exporter) send(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return -1, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "ferry-otlp")
	if e.opts.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.opts.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return -1, fmt.Errorf("otlp: export to %s: %w", e.shown, unwrapURLError(err))
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if resp.StatusCode/100 == 2 {
		return -1, partialSuccess(answer)
	}
	err = fmt.Errorf("otlp: export to %s: %s%s", e.shown, resp.Status, statusMessage(resp.Header.Get("Content-Type"), answer))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return retryAfter(resp.Header.Get("Retry-After")), err
	}
	return -1, err
}

// newTransport returns a transport with http.DefaultTransport's
// settings, made anew rather than cloned from it: a program may have put
// another RoundTripper there.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// retryAfter reads a Retry-After of seconds; zero when absent or a date.
func retryAfter(h string) time.Duration {
	s, err := strconv.Atoi(h)
	if err != nil || s <= 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}

// unwrapURLError drops the method and URL net/http puts in its errors:
// the URL may carry credentials, and the caller names the endpoint
// itself.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact is an endpoint as an error may show it: without the user
// information, where a key may hide in the name as well as the password.
func redact(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "an unparsable URL"
	}
	u.User = nil
	return u.String()
}
