package stdio

import (
	"strings"
	"testing"
)

func TestRing(t *testing.T) {
	tests := []struct {
		name   string
		size   int
		writes []string
		want   string
	}{
		{"empty", 8, nil, ""},
		{"fits", 8, []string{"ab", "cd"}, "abcd"},
		{"exactly full", 4, []string{"ab", "cd"}, "abcd"},
		{"wraps", 4, []string{"abc", "def"}, "cdef"},
		{"wraps twice", 4, []string{"abc", "def", "gh", "i"}, "fghi"},
		{"one big write", 4, []string{"a", "0123456789"}, "6789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(tt.size)
			for _, w := range tt.writes {
				r.Write([]byte(w))
			}
			if got := string(r.bytes()); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRingTail(t *testing.T) {
	var lines []string
	for i := range 30 {
		lines = append(lines, strings.Repeat(string(rune('a'+i%26)), 10))
	}
	all := strings.Join(lines, "\n") + "\n\n"
	tests := []struct {
		name            string
		text            string
		maxLines, bytes int
		want            string
	}{
		{"short", "one\ntwo\n", 20, 2048, "one\ntwo"},
		{"line bound", all, 3, 2048, strings.Join(lines[27:], "\n")},
		{"byte bound drops the cut line", all, 20, 25, lines[28] + "\n" + lines[29]},
		{"one long line is cut", strings.Repeat("x", 100), 20, 10, strings.Repeat("x", 10)},
		{"invalid utf-8", "ok \xff\n", 20, 2048, "ok \uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(1 << 10)
			r.Write([]byte(tt.text))
			if got := r.tail(tt.maxLines, tt.bytes); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
