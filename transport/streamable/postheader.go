package streamable

import (
	"fmt"
	"net/http"
	"strings"
)

// postHeader holds the headers of one POST beyond those every POST of its
// stream carries (the stateless Mcp-Method, Mcp-Name, MCP-Protocol-Version
// and Mcp-Param-* headers): a few fields, kept in a slice rather than an
// http.Header so that a message costs one allocation for them.
type postHeader []headerField

type headerField struct{ name, value string }

// set replaces the value of name, or adds it.
func (h postHeader) set(name, value string) postHeader {
	for i := range h {
		if strings.EqualFold(h[i].name, name) {
			h[i].value = value
			return h
		}
	}
	return append(h, headerField{name, value})
}

// get returns the value of name, or "".
func (h postHeader) get(name string) string {
	for _, f := range h {
		if strings.EqualFold(f.name, name) {
			return f.value
		}
	}
	return ""
}

// appendHeaderLines appends the lines of hdr to b, refusing names and
// values that would break the request's framing. Host and
// Content-Length, which the writer of the request sets, are left out.
func appendHeaderLines(b []byte, hdr http.Header) ([]byte, error) {
	for k, vs := range hdr {
		for _, v := range vs {
			var err error
			if b, err = appendHeaderLine(b, k, v); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// appendHeaderLine appends "name: value\r\n" to b, unless name is Host or
// Content-Length.
func appendHeaderLine(b []byte, name, value string) ([]byte, error) {
	if strings.EqualFold(name, "Host") || strings.EqualFold(name, "Content-Length") {
		return b, nil
	}
	if !validHeaderName(name) {
		return nil, fmt.Errorf("streamable: invalid header name %q", name)
	}
	if !validHeaderValue(value) {
		return nil, fmt.Errorf("streamable: invalid value for header %s", name)
	}
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...), nil
}
