// Package httpdeadline bounds how long an HTTP handler of ferry waits on
// its client, whatever [http.Server] it runs under: the reading of a
// request's body, and each write of an answer or of an event to a stream.
//
// A server's own ReadTimeout and WriteTimeout cannot do it alone: a
// WriteTimeout counts from the start of the request, which would cut the
// event streams MCP keeps open for hours, and many servers set neither.
// So the handlers set the connection's deadlines through
// [http.ResponseController] before each read of a body and each write.
// They leave them set when they return: the last one still bounds what
// net/http sends and reads after the handler (the end of the answer, the
// rest of an unread body), and net/http resets both before it reads the
// next request on the connection.
package httpdeadline

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// Read gives the reading of r's body d from now (d <= 0: no bound).
func Read(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
	}
}

// Write gives the next writes to w d from now (d <= 0: no bound). A
// write that cannot complete in time fails, and the connection closes.
func Write(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}

// Expired reports whether err is a deadline set here that passed.
func Expired(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}
