package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/ferrymcp/ferry/jsonrpc"
)

// Dial is what a [Dialer] is given to open the stream to one server.
type Dial struct {
	// URL is the server's entry's url.
	URL string
	// Client makes the requests: it carries [Options.HTTPClient], the
	// wrapper of [Options.WrapHTTP] (credentials) and the host's record of
	// refusals, so a 401 of a dialled server is told apart as KindAuth.
	Client *http.Client
	// Header holds the entry's headers, for every request.
	Header http.Header
	// Logger is [Options.Logger].
	Logger *slog.Logger
}

// Dialer opens the stream to a server reached by a transport the host
// does not link itself (WebSocket): a program that wants such servers
// gives one per URL scheme in [Options.Dialers], so that a program that
// does not links none of its library.
type Dialer func(ctx context.Context, d Dial) (jsonrpc.Stream, error)

// errNoDialer is the failure of an entry whose URL scheme has no Dialer:
// a configuration the program cannot serve, which no restart mends.
var errNoDialer = errors.New("no dialer for this URL scheme")

// dialer returns the Dialer of the server's URL scheme.
func (s *Server) dialer() (Dialer, error) {
	u, err := url.Parse(s.cfg.URL)
	if err != nil {
		return nil, err
	}
	if d := s.h.opts.Dialers[u.Scheme]; d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("%w %q: this program was built without the %s transport (host.Options.Dialers)", errNoDialer, u.Scheme, s.cfg.Transport)
}
