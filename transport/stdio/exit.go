package stdio

import "strings"

// ExitError is the error [ClientStream.Read] returns once the server
// process is gone, so that pending calls fail saying why (its exit status
// and the last lines it wrote on stderr) instead of just "EOF".
type ExitError struct {
	// Status describes how the process ended, such as "exit status 3" or
	// "signal: killed"; empty when the process closed its stdout but had
	// not exited yet when the error was made.
	Status string
	// Code is the exit code, or -1 when the process was killed by a
	// signal or its status is unknown.
	Code int
	// Stderr is the tail of what the process wrote on stderr.
	Stderr string
}

// Error reads "server process exited (STATUS); stderr: TAIL", which is
// what a user needs to see to fix a server that does not start.
func (e *ExitError) Error() string {
	var b strings.Builder
	if e.Status != "" {
		b.WriteString("server process exited (")
		b.WriteString(e.Status)
		b.WriteString(")")
	} else {
		b.WriteString("server process closed its stdout")
	}
	if e.Stderr != "" {
		b.WriteString("; stderr: ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}
