package host

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// ErrorKind classifies what went wrong, so that a program (a CLI's exit
// code, a gateway's HTTP status) can tell the cases apart.
type ErrorKind int

// The kinds of [Error].
const (
	// KindConfig: the server's configuration entry is unusable.
	KindConfig ErrorKind = iota + 1
	// KindUnknown: no server or tool of that name.
	KindUnknown
	// KindNotAllowed: the tool is filtered out by an allow or deny list.
	KindNotAllowed
	// KindDisabled: the server is disabled in its configuration.
	KindDisabled
	// KindUnreachable: the server could not be started or reached, or it
	// crashed and is down.
	KindUnreachable
	// KindAuth: the server refused the credentials (HTTP 401 or 403).
	KindAuth
	// KindTimeout: the server did not answer in time.
	KindTimeout
)

var kindNames = map[ErrorKind]string{
	KindConfig: "config", KindUnknown: "unknown", KindNotAllowed: "not_allowed", KindDisabled: "disabled",
	KindUnreachable: "unreachable", KindAuth: "auth", KindTimeout: "timeout",
}

// String returns the kind's name ("unreachable", "auth", ...).
func (k ErrorKind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error is a failure of the host about one server.
type Error struct {
	// Server is the server's name; empty when no server was found.
	Server string
	Kind   ErrorKind
	Err    error
	// Stderr is the end of what a stdio server wrote on stderr, when it
	// matters (it failed to start, or crashed).
	Stderr string
	// RetryAt is when a server that is down will be started again; zero
	// when it will not.
	RetryAt time.Time
}

// Error reads "server "NAME": problem", with the stderr tail and the
// restart time when known.
func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Server != "" {
		s = fmt.Sprintf("server %q: %s", e.Server, s)
	}
	var exit *stdio.ExitError
	if e.Stderr != "" && !errors.As(e.Err, &exit) {
		s += "; stderr: " + e.Stderr
	}
	if !e.RetryAt.IsZero() {
		s += fmt.Sprintf(" (restarting in %v)", time.Until(e.RetryAt).Round(time.Millisecond))
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of err: that of the *[Error] it wraps, else
// KindTimeout for timeouts and KindUnreachable for a server process that
// exited; 0 for anything else (such as a JSON-RPC error the server
// answered).
func KindOf(err error) ErrorKind {
	var he *Error
	if errors.As(err, &he) {
		return he.Kind
	}
	var te *client.TimeoutError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	var exit *stdio.ExitError
	if errors.As(err, &exit) {
		return KindUnreachable
	}
	return 0
}
