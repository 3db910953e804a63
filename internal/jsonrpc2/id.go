package jsonrpc2

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

type idKind uint8

const (
	idNone   idKind = iota // notification, or a response whose id was null
	idInt                  // an integer that fits in int64
	idString               // a JSON string
	idNumber               // an integer too large for int64, kept as its JSON text
)

// ID is a JSON-RPC request id: a string or an integer, kept exactly as the
// peer sent it so that a response carries the same value back. The zero ID
// means "no id" (a notification, or an error response to an unreadable
// request). IDs are comparable and can be used as map keys.
type ID struct {
	kind idKind
	n    int64
	s    string
}

// Int64ID returns an integer ID.
func Int64ID(n int64) ID { return ID{kind: idInt, n: n} }

// StringID returns a string ID.
func StringID(s string) ID { return ID{kind: idString, s: s} }

// IsValid reports whether the ID is set (not a notification's missing id).
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether the ID was sent as a JSON string.
func (id ID) IsString() bool { return id.kind == idString }

// Int64 returns the integer value of an integer ID.
func (id ID) Int64() (int64, bool) { return id.n, id.kind == idInt }

// String returns the ID as it appears on the wire: quoted for a string ID,
// digits for an integer, "null" for no ID.
func (id ID) String() string { return string(id.appendJSON(nil)) }

// appendJSON appends the wire form of the ID.
func (id ID) appendJSON(b []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(b, id.n, 10)
	case idString:
		b, _ = jsontext.AppendQuote(b, id.s)
		return b
	case idNumber:
		return append(b, id.s...)
	default:
		return append(b, "null"...)
	}
}

// MarshalJSONTo implements the json v2 MarshalerTo interface.
func (id ID) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(id.appendJSON(nil))
}

// MarshalJSON implements json.Marshaler.
func (id ID) MarshalJSON() ([]byte, error) { return id.appendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler, accepting a string or an
// integer.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := parseID(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// parseID decodes the raw JSON value of an id member. It accepts strings
// and integers; null gives the zero ID. Fractions and exponents are
// rejected: MCP requires "a string or integer ID".
func parseID(raw []byte) (ID, error) {
	if len(raw) == 0 {
		return ID{}, errorf(CodeInvalidRequest, "empty id")
	}
	switch c := raw[0]; {
	case c == '"':
		s, err := unquote(raw)
		if err != nil {
			return ID{}, errorf(CodeInvalidRequest, "invalid id: %v", err)
		}
		return ID{kind: idString, s: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		for _, d := range raw[1:] {
			if d < '0' || d > '9' {
				return ID{}, errorf(CodeInvalidRequest, "id %s is not an integer", raw)
			}
		}
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && (n != 0 || raw[0] != '-') {
			return ID{kind: idInt, n: n}, nil
		}
		return ID{kind: idNumber, s: string(raw)}, nil
	case c == 'n':
		return ID{}, nil
	default:
		return ID{}, errorf(CodeInvalidRequest, "id must be a string or an integer, not %s", kindName(c))
	}
}

func kindName(c byte) string {
	switch c {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a " + string(c)
}
