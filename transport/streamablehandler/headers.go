package streamablehandler

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/internal/jsonrpc2"
	"github.com/ferrymcp/ferry/internal/mcpheader"
	"github.com/ferrymcp/ferry/internal/streamwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

func mismatch(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: protocol.CodeHeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
}

// checkHeaders validates the request metadata headers of a POST against
// its body: "Servers that process the request body MUST reject requests
// where the values specified in the headers do not match the
// corresponding values in the request body." A stateless request must
// carry them (required). The legacy revisions define none of these
// headers, so a legacy request need not carry them, but those it carries
// are held to the same rule: a proxy or middleware in front of the
// server may route or authorize on them, and must not be told one method
// or tool while the server runs another. No conforming legacy client is
// refused for it: it sends none, or (ferry's client) the body's values.
func (h *Handler) checkHeaders(r *http.Request, m *jsonrpc.Message, required bool) *jsonrpc.Error {
	if !m.IsRequest() {
		return nil // header requirements for notification POSTs are not defined
	}
	mh, sent, e := singleHeader(r.Header, streamwire.HeaderMethod, required)
	switch {
	case e != nil:
		return e
	case sent && mh != m.Method:
		return mismatch("Mcp-Method header value %q does not match body value %q", mh, m.Method)
	}
	field := streamwire.NameField(m.Method)
	if field == "" {
		return nil
	}
	body, found, _ := jsonrpc2.Member(m.Params, field)
	var bname string
	if found && len(body) > 0 && body[0] == '"' {
		bname, _ = jsonrpc2.Unquote(body)
	}
	raw, sent, e := singleHeader(r.Header, streamwire.HeaderName, required)
	if e != nil {
		return e
	}
	if sent {
		hname, err := mcpheader.Decode(raw)
		if err != nil {
			return mismatch("Mcp-Name header: %v", err)
		}
		if hname != bname {
			return mismatch("Mcp-Name header value %q does not match body value %q", hname, bname)
		}
	}
	if m.Method == protocol.MethodToolsCall {
		return h.checkParamHeaders(r, bname, m.Params, required)
	}
	return nil
}

// singleHeader returns the value of the header name, trimmed, and whether
// it was sent: a missing header is a mismatch when required, and so are
// several (a proxy may read another of them than the server does).
func singleHeader(hdr http.Header, name string, required bool) (string, bool, *jsonrpc.Error) {
	values := hdr.Values(name)
	switch {
	case len(values) > 1:
		return "", false, mismatch("more than one %s header", name)
	case len(values) == 0 && required:
		return "", false, mismatch("missing %s header", name)
	case len(values) == 0:
		return "", false, nil
	}
	return strings.Trim(values[0], " \t"), true, nil
}

func (h *Handler) checkParamHeaders(r *http.Request, tool string, params jsontext.Value, required bool) *jsonrpc.Error {
	hps, ok := h.server.ToolHeaders(tool)
	if !ok || len(hps) == 0 {
		// An unknown tool the server answers itself; a tool that mirrors
		// nothing has nothing to check.
		return nil
	}
	args, _, _ := jsonrpc2.Member(params, "arguments")
	for _, hp := range hps {
		value, present := mcpheader.Lookup(args, hp)
		if !present {
			continue // "Server MUST NOT expect the header"
		}
		hv, sent, e := singleHeader(r.Header, hp.Header, false)
		switch {
		case e != nil:
			return e
		case !sent && required:
			return mismatch("missing %s header for argument %s", hp.Header, strings.Join(hp.Path, "."))
		case !sent:
			continue
		}
		got, err := mcpheader.Decode(hv)
		if err != nil {
			return mismatch("%s header: %v", hp.Header, err)
		}
		if !mcpheader.Matches(got, value) {
			return mismatch("%s header value %q does not match body value %s", hp.Header, got, value)
		}
	}
	return nil
}

// The values of the response headers every answer of a kind carries,
// shared read-only by all of them: assigned to the header map under their
// canonical keys, they cost neither Header.Set's canonicalisation nor a
// one-value slice per response (together a third of the mapassign time
// of a small legacy call at HTTP c16, and an allocation). Nothing changes
// a header value in place: net/http and middleware replace, delete or
// append, and appending to a full one-value slice copies it.
var (
	valueJSON        = []string{"application/json"}
	valueEventStream = []string{"text/event-stream"}
	valueNoCache     = []string{"no-cache, no-transform"}
	valueNo          = []string{"no"}
)

// setJSONHeaders sets the headers of a JSON answer of n bytes: with its
// length known, the body goes out in one piece rather than in chunks.
func setJSONHeaders(h http.Header, n int) {
	h["Content-Type"] = valueJSON
	h["Content-Length"] = []string{strconv.Itoa(n)}
}

// setSSEHeaders sets the headers of an event stream, whose length is not
// known.
func setSSEHeaders(h http.Header) {
	h["Content-Type"] = valueEventStream
	h["Cache-Control"] = valueNoCache
	// "servers SHOULD include the X-Accel-Buffering: no header", so that
	// proxies pass events on at once.
	h["X-Accel-Buffering"] = valueNo
	delete(h, "Content-Length")
}
