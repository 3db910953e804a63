// Package httperr holds the error of the HTTP client transports
// (Streamable HTTP and HTTP+SSE) for a request the server refused with an
// HTTP status, rather than answering it with a JSON-RPC message.
//
// A caller tells the kinds of failure apart with the errors package:
//
//   - a JSON-RPC error answer is a *[jsonrpc.Error] (and only that is);
//   - a refusal by HTTP status is a *[StatusError], whose StatusCode and
//     WWWAuthenticate let a client see that it must authorize (401) or is
//     not allowed (403);
//   - a network failure keeps its cause: errors.Is(err,
//     syscall.ECONNREFUSED), a *net.OpError, io.EOF or
//     io.ErrUnexpectedEOF for a server gone mid-answer.
//
// The package does not import net/http, so that the client package can
// recognise the error without linking an HTTP stack.
//
// [jsonrpc.Error]: https://pkg.go.dev/github.com/ferrymcp/ferry/jsonrpc#Error
package httperr

import (
	"strconv"
	"strings"
)

// StatusError is an HTTP request that the server answered with a status
// other than success and without a JSON-RPC error in the body.
type StatusError struct {
	// Method and URL are the HTTP request's ("POST", "GET").
	Method string
	URL    string
	// StatusCode is the HTTP status code, such as 401; Status the status
	// line's text, such as "401 Unauthorized".
	StatusCode int
	Status     string
	// Body is the start of the response body as text for a message:
	// HTML reduced to its text, spaces collapsed, at most 256 bytes.
	Body string
	// WWWAuthenticate is the response's WWW-Authenticate header (its
	// values joined with ", "), where a 401 or 403 names the
	// authorization scheme and, for MCP, the resource_metadata URL.
	WWWAuthenticate string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString(e.Method)
	b.WriteByte(' ')
	b.WriteString(e.URL)
	b.WriteString(": HTTP ")
	if e.Status != "" {
		b.WriteString(e.Status)
	} else {
		b.WriteString(strconv.Itoa(e.StatusCode))
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	return b.String()
}
