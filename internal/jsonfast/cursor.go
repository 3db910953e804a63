package jsonfast

import (
	"errors"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// ErrSyntax reports input a Cursor cannot walk. Since its input was
// validated before, callers treat it as "use json v2 instead".
var ErrSyntax = errors.New("jsonfast: unexpected input")

// Cursor walks valid JSON in one pass, decoding what the caller asks for
// and skipping the rest: nothing is scanned twice.
type Cursor struct {
	b []byte
	i int
}

// NewCursor returns a cursor at the start of b.
func NewCursor(b []byte) *Cursor { return &Cursor{b: b, i: SkipSpace(b, 0)} }

// Peek returns the first byte of the next value, or 0 at the end.
func (c *Cursor) Peek() byte {
	if c.i >= len(c.b) {
		return 0
	}
	return c.b[c.i]
}

// Object walks an object: f is called with each member's name (raw, and
// whether it holds escapes) and must consume the member's value with one
// of the cursor's methods.
func (c *Cursor) Object(f func(name []byte, escaped bool) error) error {
	if c.Peek() != '{' {
		return ErrSyntax
	}
	c.i = SkipSpace(c.b, c.i+1)
	if c.Peek() == '}' {
		c.i = SkipSpace(c.b, c.i+1)
		return nil
	}
	for {
		if c.Peek() != '"' {
			return ErrSyntax
		}
		end, escaped := skipString(c.b, c.i)
		if end < 0 {
			return ErrSyntax
		}
		name := c.b[c.i+1 : end-1]
		c.i = SkipSpace(c.b, end)
		if c.Peek() != ':' {
			return ErrSyntax
		}
		c.i = SkipSpace(c.b, c.i+1)
		if err := f(name, escaped); err != nil {
			return err
		}
		switch c.Peek() {
		case ',':
			c.i = SkipSpace(c.b, c.i+1)
		case '}':
			c.i = SkipSpace(c.b, c.i+1)
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Array walks an array: f is called for each element and must consume
// it.
func (c *Cursor) Array(f func() error) error {
	if c.Peek() != '[' {
		return ErrSyntax
	}
	c.i = SkipSpace(c.b, c.i+1)
	if c.Peek() == ']' {
		c.i = SkipSpace(c.b, c.i+1)
		return nil
	}
	for {
		if err := f(); err != nil {
			return err
		}
		switch c.Peek() {
		case ',':
			c.i = SkipSpace(c.b, c.i+1)
		case ']':
			c.i = SkipSpace(c.b, c.i+1)
			return nil
		default:
			return ErrSyntax
		}
	}
}

// Raw consumes the next value and returns its bytes (aliasing the input).
func (c *Cursor) Raw() (jsontext.Value, error) {
	end := SkipValue(c.b, c.i)
	if end < 0 {
		return nil, ErrSyntax
	}
	v := c.b[c.i:end]
	c.i = SkipSpace(c.b, end)
	return v, nil
}

// Skip consumes the next value.
func (c *Cursor) Skip() error {
	_, err := c.Raw()
	return err
}

// aliasMin is the length from which a string without escapes shares the
// input's memory instead of being copied. Below it, copying is cheap and
// keeps a short string from holding on to a large buffer.
const aliasMin = 4 << 10

// String consumes a string and returns its value: one scan, and one copy
// when it has no escapes; none when it is long, for then it shares the
// input's memory. The input must therefore never be modified (ferry's
// transports give each message a buffer of its own that nothing writes
// again).
func (c *Cursor) String() (string, error) {
	if c.Peek() != '"' {
		return "", ErrSyntax
	}
	end, escaped := skipString(c.b, c.i)
	if end < 0 {
		return "", ErrSyntax
	}
	raw := c.b[c.i:end]
	c.i = SkipSpace(c.b, end)
	if !escaped {
		if n := len(raw) - 2; n >= aliasMin {
			return unsafe.String(&raw[1], n), nil
		}
		return string(raw[1 : len(raw)-1]), nil
	}
	u, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return "", ErrSyntax
	}
	return string(u), nil
}

// StringIs consumes a string and reports whether its text, taken as it
// is, equals want: nothing is copied. A string with escapes is not
// unescaped and never equals; callers that must accept one fall back to
// String.
func (c *Cursor) StringIs(want string) (bool, error) {
	if c.Peek() != '"' {
		return false, ErrSyntax
	}
	end, escaped := skipString(c.b, c.i)
	if end < 0 {
		return false, ErrSyntax
	}
	raw := c.b[c.i+1 : end-1]
	c.i = SkipSpace(c.b, end)
	return !escaped && string(raw) == want, nil
}

// Literal consumes a non-string scalar (number, true, false, null) and
// returns its text.
func (c *Cursor) Literal() ([]byte, error) {
	switch c.Peek() {
	case '"', '{', '[', 0:
		return nil, ErrSyntax
	}
	return c.Raw()
}
