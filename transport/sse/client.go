package sse

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/ferrymcp/ferry/internal/bodytext"
	"github.com/ferrymcp/ferry/internal/redirect"
	"github.com/ferrymcp/ferry/internal/ssewire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/transport/httperr"
)

// Transport reaches an MCP server over the HTTP with SSE transport of
// revision 2024-11-05. It is a client.Transport:
//
//	c, err := client.Connect(ctx, &sse.Transport{URL: "http://localhost:3001/sse"}, nil)
//
// Open GETs URL, waits for the endpoint event, then POSTs each message to
// the endpoint and reads the server's messages from the event stream.
// Closing the stream closes the GET, which ends the session.
type Transport struct {
	// URL is the server's SSE endpoint.
	URL string
	// Client makes the requests (default http.DefaultClient). Its Timeout
	// bounds each POST but not the event stream, which lasts as long as
	// the session. Redirects are followed only within URL's origin.
	Client *http.Client
	// Header is sent with every request (e.g. Authorization).
	Header http.Header
	// MaxEventBytes bounds one event of the stream (default 16 MiB and
	// 64 KiB: room for a message of [jsonrpc.DefaultMaxSize] and its
	// fields); a larger one ends the stream.
	MaxEventBytes int
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// ErrNoEndpoint is returned (wrapped) by [Transport.Open] when the
// server's event stream does not begin with an endpoint event: the
// server does not speak this transport.
var ErrNoEndpoint = errors.New("sse: the server sent no endpoint event")

// Open connects: it GETs the SSE endpoint and waits, within ctx, for the
// endpoint event. A server that does not speak this transport fails it
// with an error wrapping [ErrNoEndpoint] or a *[httperr.StatusError]
// (with the status code, the start of the body and the WWW-Authenticate
// header). The session is not tied to ctx; closing the returned
// stream ends it.
func (t *Transport) Open(ctx context.Context) (jsonrpc.Stream, error) {
	base, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("sse: invalid URL: %w", err)
	}
	if base.Scheme != "http" && base.Scheme != "https" {
		return nil, fmt.Errorf("sse: URL %q is not http or https", t.URL)
	}
	s := &clientStream{
		header: t.Header.Clone(),
		log:    t.Logger,
		done:   make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.post, s.get = clients(t.Client, s.log)

	// The stream lives until Close; ctx bounds only the connecting.
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.life, s.cancel = life, cancel
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	fail := func(err error) (jsonrpc.Stream, error) {
		s.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("sse: connecting to %s: %w", t.URL, context.Cause(ctx))
		}
		return nil, err
	}

	req, err := http.NewRequestWithContext(life, http.MethodGet, t.URL, nil)
	if err != nil {
		return fail(err)
	}
	s.setHeaders(req)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := s.get.Do(req)
	if err != nil {
		return fail(fmt.Errorf("sse: GET %s: %w", t.URL, err))
	}
	s.body = resp.Body
	if resp.StatusCode != http.StatusOK {
		return fail(statusError(resp))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fail(fmt.Errorf("%w: GET %s answered %q, not an event stream", ErrNoEndpoint, t.URL, resp.Header.Get("Content-Type")))
	}
	s.events = ssewire.NewReader(resp.Body, t.MaxEventBytes)
	endpoint, err := s.readEndpoint(resp.Request.URL)
	if err != nil {
		return fail(err)
	}
	s.endpoint = endpoint.String()
	s.log.Debug("sse: connected", "url", t.URL, "endpoint", s.endpoint)
	return s, nil
}

// readEndpoint reads the first event, which must be the endpoint event,
// and resolves its URI against the event stream's URL.
func (s *clientStream) readEndpoint(base *url.URL) (*url.URL, error) {
	for {
		e, err := s.events.Next()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%w: reading the event stream: %w", ErrNoEndpoint, err)
		}
		if len(e.Data) == 0 && e.Name == "message" {
			continue // a priming event, carrying at most an id
		}
		if e.Name != "endpoint" {
			return nil, fmt.Errorf("%w: the first event is %q", ErrNoEndpoint, e.Name)
		}
		ref, err := url.Parse(strings.TrimSpace(string(e.Data)))
		if err != nil {
			return nil, fmt.Errorf("sse: invalid endpoint %q: %w", e.Data, err)
		}
		u := base.ResolveReference(ref)
		// The endpoint must not send the client's messages (and its
		// credentials) elsewhere.
		if !redirect.SameOrigin(u, base) {
			return nil, fmt.Errorf("sse: refusing the endpoint %s: its origin differs from the event stream's (%s://%s)", u, base.Scheme, base.Host)
		}
		u.Fragment = ""
		return u, nil
	}
}

// clients returns the clients for POSTs and for the event stream: copies
// of c that follow redirects only within the request's origin, keeping
// its method (see internal/redirect), the second one without a timeout.
func clients(c *http.Client, log *slog.Logger) (post, get *http.Client) {
	p := redirect.Client(c, &redirect.Policy{Log: log})
	g := *p
	g.Timeout = 0
	return p, &g
}

// statusError reads the start of a refused request's body and closes it.
func statusError(resp *http.Response) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	return &httperr.StatusError{
		Method:          resp.Request.Method,
		URL:             resp.Request.URL.String(),
		StatusCode:      resp.StatusCode,
		Status:          resp.Status,
		Body:            bodytext.Excerpt(b, resp.Header.Get("Content-Type")),
		WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
	}
}

// clientStream is the client's end of a session.
type clientStream struct {
	post, get *http.Client
	header    http.Header
	log       *slog.Logger
	endpoint  string

	life   context.Context // cancelled by Close
	cancel context.CancelFunc
	body   io.ReadCloser
	events *ssewire.Reader // read only by Read (and Open before it)

	closeOnce sync.Once
	done      chan struct{}
}

func (s *clientStream) setHeaders(req *http.Request) {
	for k, v := range s.header {
		req.Header[k] = v
	}
}

// Read returns the next message of the event stream, skipping events
// that are not message events. io.EOF means the server ended the stream,
// and with it the session.
func (s *clientStream) Read() (*jsonrpc.Message, error) {
	for {
		e, err := s.events.Next()
		if err != nil {
			select {
			case <-s.done:
				return nil, jsonrpc.ErrClosed
			default:
			}
			if errors.Is(err, ssewire.ErrEventTooLarge) {
				// A message was lost: a call would wait for it forever.
				return nil, err
			}
			if err != io.EOF {
				err = fmt.Errorf("sse: reading the event stream: %w", err)
			}
			return nil, err
		}
		if e.Name != "message" {
			s.log.Debug("sse: ignoring an event", "event", e.Name)
			continue
		}
		if len(e.Data) == 0 {
			continue
		}
		return jsonrpc.Decode(e.Data, jsonrpc.Limits{MaxSize: len(e.Data)})
	}
}

// Write POSTs m to the session's endpoint and waits for the server to
// accept it.
func (s *clientStream) Write(ctx context.Context, m *jsonrpc.Message) error {
	select {
	case <-s.done:
		return jsonrpc.ErrClosed
	default:
	}
	body, err := jsonrpc.AppendMessage(nil, m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.life, cancel)()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	s.setHeaders(req)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.post.Do(req)
	if err != nil {
		select {
		case <-s.done:
			return jsonrpc.ErrClosed
		default:
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("sse: POST %s: %w", s.endpoint, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp)
	}
	// Drain a short body so that the connection can be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return nil
}

// Close ends the session: it closes the event stream, and cancels the
// POSTs in progress.
func (s *clientStream) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		s.cancel()
		if s.body != nil {
			s.body.Close()
		}
	})
	return nil
}
