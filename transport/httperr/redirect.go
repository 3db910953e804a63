package httperr

import "strconv"

// RedirectError is a request the server redirected where the transport
// does not follow: to another origin (scheme, host and port), unless the
// transport was told to follow those; with a change of method (a POST
// redirected with 301, 302 or 303 would become a GET, which no MCP
// endpoint answers); or after too many redirects.
type RedirectError struct {
	// Method and URL are the redirected request's.
	Method string
	URL    string
	// StatusCode is the redirect's HTTP status code, such as 307; Status
	// the status line's text.
	StatusCode int
	Status     string
	// Location is where the server sent the request, resolved against
	// URL.
	Location string
	// Reason says why the transport did not follow.
	Reason string
}

// Error reads "POST URL: HTTP 307 Temporary Redirect to LOCATION, not
// followed: REASON".
func (e *RedirectError) Error() string {
	status := e.Status
	if status == "" {
		status = strconv.Itoa(e.StatusCode)
	}
	return e.Method + " " + e.URL + ": HTTP " + status + " to " + e.Location + ", not followed: " + e.Reason
}
