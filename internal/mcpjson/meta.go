package mcpjson

import (
	"github.com/ferrymcp/ferry/internal/jsonfast"
	"github.com/ferrymcp/ferry/protocol"
)

// appendMeta appends a result's _meta. Every 2026-07-28 answer carries the
// server's constant {"io.modelcontextprotocol/serverInfo": impl}, which
// json v2 encodes by reflection (map, interface, struct) at about a fifth
// of the server's CPU per call: that one is written here, the way json v2
// writes it, and any other _meta goes through json v2.
func appendMeta(b []byte, m protocol.Meta) ([]byte, error) {
	if impl, ok := serverInfoOnly(m); ok {
		b = append(b, `{"`+protocol.MetaServerInfo+`":`...)
		b, err := appendImplementation(b, &impl)
		return append(b, '}'), err
	}
	return jsonfast.AppendMarshal(b, m)
}

// serverInfoOnly reports whether m is the server's own _meta: its
// Implementation alone, without icons (which are left to json v2).
func serverInfoOnly(m protocol.Meta) (protocol.Implementation, bool) {
	if len(m) != 1 {
		return protocol.Implementation{}, false
	}
	impl, ok := m[protocol.MetaServerInfo].(protocol.Implementation)
	return impl, ok && len(impl.Icons) == 0
}

// appendImplementation writes impl's fields in declaration order,
// leaving out the empty omitempty ones, as json v2 does.
func appendImplementation(b []byte, impl *protocol.Implementation) ([]byte, error) {
	b, err := appendField(b, `{"name":`, impl.Name, false)
	if err == nil {
		b, err = appendField(b, `,"title":`, impl.Title, true)
	}
	if err == nil {
		b, err = appendField(b, `,"version":`, impl.Version, false)
	}
	if err == nil {
		b, err = appendField(b, `,"description":`, impl.Description, true)
	}
	if err == nil {
		b, err = appendField(b, `,"websiteUrl":`, impl.WebsiteURL, true)
	}
	return append(b, '}'), err
}

func appendField(b []byte, key, s string, omitEmpty bool) ([]byte, error) {
	if omitEmpty && s == "" {
		return b, nil
	}
	return jsonfast.AppendQuote(append(b, key...), s)
}
