package stdio

import (
	"bytes"
	"testing"
)

func TestSkipWritten(t *testing.T) {
	pieces := func() [][]byte { return [][]byte{[]byte("ab"), nil, []byte("cde"), {}, []byte("f")} }
	for _, tc := range []struct {
		n    int
		want string // the pieces left, joined with |
	}{
		{0, "ab||cde||f"}, {1, "b||cde||f"}, {2, "cde||f"}, {4, "e||f"}, {5, "f"}, {6, ""},
	} {
		left := skipWritten(pieces(), tc.n)
		if got := string(bytes.Join(left, []byte("|"))); got != tc.want {
			t.Errorf("skipWritten(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
