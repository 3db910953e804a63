package jsonfast

import "testing"

func TestCursorStringIs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		is   bool
		err  bool
		rest byte // what the cursor is at afterwards
	}{
		{in: `"text" ,`, want: "text", is: true, rest: ','},
		{in: `"texts"}`, want: "text", rest: '}'},
		{in: `"tex"`, want: "text"},
		{in: `""`, want: "", is: true},
		{in: `"\u0074ext"`, want: "text"}, // escaped: not compared
		{in: `"te\"xt"`, want: `te"xt`},
		{in: `12`, want: "12", err: true, rest: '1'},
		{in: `"open`, want: "open", err: true, rest: '"'},
	} {
		c := NewCursor([]byte(tc.in))
		is, err := c.StringIs(tc.want)
		if is != tc.is || (err != nil) != tc.err || c.Peek() != tc.rest {
			t.Errorf("StringIs(%q) on %s = %v, %v, then at %q; want %v, error %v, then at %q", tc.want, tc.in, is, err, c.Peek(), tc.is, tc.err, tc.rest)
		}
	}
}
