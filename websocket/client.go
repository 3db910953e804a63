package websocket

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/ferrymcp/ferry/internal/redirect"
	"github.com/ferrymcp/ferry/jsonrpc"
)

// Transport reaches an MCP server over WebSocket: a ws:// or wss:// URL.
// It implements the client package's Transport. The zero value of every
// field but URL is usable.
type Transport struct {
	// URL is the server's endpoint, ws:// or wss://.
	URL string
	// Header is sent with the upgrade request (e.g. Authorization).
	Header http.Header
	// Client makes the upgrade request; nil means http.DefaultClient.
	// Its Transport's TLS settings apply to wss:// URLs. A redirect of
	// the upgrade is followed only to the URL's own origin (scheme, host
	// and port), as the Streamable HTTP and SSE transports do: Header
	// (an API key, say) never goes to a host the server chose.
	Client *http.Client
	// MaxMessageBytes bounds one incoming message (default 16 MiB).
	MaxMessageBytes int
	// KeepAlive is the interval of pings; a pong that does not come back
	// within another interval ends the connection (default 30 seconds;
	// negative: no pings).
	KeepAlive time.Duration
	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// Open dials the server. ctx bounds only the dialling; the connection
// lasts until the stream is closed.
func (t *Transport) Open(ctx context.Context) (jsonrpc.Stream, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("websocket: %w", err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" || u.Host == "" {
		return nil, fmt.Errorf("websocket: %q is not a ws:// or wss:// URL", t.URL)
	}
	c, resp, err := websocket.Dial(ctx, t.URL, &websocket.DialOptions{
		HTTPClient:      redirect.Client(t.Client, &redirect.Policy{Log: t.Logger}),
		HTTPHeader:      t.Header,
		Subprotocols:    []string{Subprotocol},
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if resp != nil {
			return nil, &UpgradeError{URL: u.Redacted(), StatusCode: resp.StatusCode, Err: err}
		}
		return nil, fmt.Errorf("websocket: connecting to %s: %w", u.Redacted(), err)
	}
	// A server that picked no subprotocol is taken at its word that it
	// speaks MCP; one that picked another is not.
	if p := c.Subprotocol(); p != "" && p != Subprotocol {
		c.Close(websocket.StatusPolicyViolation, "")
		return nil, fmt.Errorf("websocket: %s chose subprotocol %q, not %q", u.Redacted(), p, Subprotocol)
	}
	keepAlive := t.KeepAlive
	if keepAlive == 0 {
		keepAlive = 30 * time.Second
	}
	return newStream(c, jsonrpc.Limits{MaxSize: t.MaxMessageBytes}, keepAlive, readBounds{}), nil
}

// UpgradeError reports a server that answered the upgrade request with an
// HTTP status instead of switching protocols (401 and 403 among them).
type UpgradeError struct {
	URL        string
	StatusCode int
	Err        error
}

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("websocket: %s answered the upgrade with HTTP %d %s", e.URL, e.StatusCode, http.StatusText(e.StatusCode))
}

func (e *UpgradeError) Unwrap() error { return e.Err }
