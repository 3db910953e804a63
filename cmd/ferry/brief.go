package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/transport/httperr"
)

// brief returns the one sentence a user can act on for the failures
// whose full message carries the layers beneath (the client, the
// transport, the HTTP request, a whole error page): a connect timeout, a
// refused connection, a name that does not resolve, an HTTP status. ok
// is false for the others, whose message is already the sentence. The
// full message is shown under -v and kept in --format json.
func (o *cli) brief(err error) (msg string, ok bool) {
	if j, isJoin := err.(interface{ Unwrap() []error }); isJoin {
		var parts []string
		shortened := false
		for _, e := range j.Unwrap() {
			m, ok := o.brief(e)
			if !ok {
				m = e.Error()
			}
			shortened = shortened || ok
			parts = append(parts, m)
		}
		return strings.Join(parts, "\n"), shortened
	}
	var he *host.Error
	if !errors.As(err, &he) || he.Server == "" {
		return "", false
	}
	server := fmt.Sprintf("server %q", he.Server)
	var status *httperr.StatusError
	var dns *net.DNSError
	var op *net.OpError
	var timeout *client.TimeoutError
	switch {
	case errors.As(err, &status):
		hint := ""
		switch status.StatusCode {
		case 404, 405, 501:
			hint = "; is the URL the server's MCP endpoint?"
		}
		return fmt.Sprintf("%s answered HTTP %s to %s %s%s", server, httpStatusText(status), status.Method, status.URL, hint), true
	case errors.Is(err, syscall.ECONNREFUSED):
		addr := ""
		if errors.As(err, &op) && op.Addr != nil {
			addr = " at " + op.Addr.String()
		}
		return fmt.Sprintf("%s refused the connection: nothing listens%s; is the server running?", server, addr), true
	case errors.As(err, &dns):
		return fmt.Sprintf("%s cannot be reached: the host name %s does not resolve", server, dns.Name), true
	case he.Kind == host.KindTimeout && !errors.As(err, &timeout) && errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s did not start and answer within %v; raise --connect-timeout if it is slow to start", server, o.connectTO), true
	}
	return "", false
}

func httpStatusText(e *httperr.StatusError) string {
	if e.Status != "" {
		return e.Status
	}
	return fmt.Sprint(e.StatusCode)
}
