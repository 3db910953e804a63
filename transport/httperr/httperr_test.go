package httperr

import "testing"

func TestStatusErrorMessage(t *testing.T) {
	e := &StatusError{Method: "POST", URL: "http://h/mcp", StatusCode: 401, Status: "401 Unauthorized", Body: "no token"}
	if got, want := e.Error(), "POST http://h/mcp: HTTP 401 Unauthorized: no token"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	e = &StatusError{Method: "GET", URL: "http://h/sse", StatusCode: 599}
	if got, want := e.Error(), "GET http://h/sse: HTTP 599"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
