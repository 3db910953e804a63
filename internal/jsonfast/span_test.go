package jsonfast

import (
	"strings"
	"testing"
)

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in            string
		end           int
		escaped, ok   bool
		trustedEscape bool
	}{
		{`"abc"`, 5, false, true, false},
		{`"a\"b"`, 6, true, true, true},
		{`"a\u00e9"`, 9, true, true, true},
		{"\"ctl\x01\"", -1, false, false, false},
		{`"héllo"`, 8, false, true, false},
		{"\"bad \xff\"", -1, false, false, false},
		{`"unterminated`, -1, false, false, false},
		{`"` + strings.Repeat("x", 100) + `"`, 102, false, true, false},
	} {
		end, escaped, _, ok := StringEnd([]byte(tc.in), 0)
		if ok != tc.ok || (ok && (end != tc.end || escaped != tc.escaped)) {
			t.Errorf("StringEnd(%q) = %d, %v, %v; want %d, %v, %v", tc.in, end, escaped, ok, tc.end, tc.escaped, tc.ok)
		}
	}
}

func BenchmarkClean64K(b *testing.B) {
	s := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", 1100))[:64<<10]
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if ok, _ := clean(s); !ok {
			b.Fatal("not clean")
		}
	}
}
