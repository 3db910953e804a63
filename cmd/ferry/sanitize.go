package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// safe makes text a server controls harmless at a terminal: control
// characters (ESC and the rest of C0 but tab and newline, DEL, C1 such
// as CSI U+009B) are shown in caret or \u notation instead of acting,
// so that no window title, clipboard write (OSC 52), cursor move or
// screen clearing reaches the user's terminal; bidirectional overrides,
// which reorder what is shown, are shown as \u escapes too; invalid
// UTF-8 becomes U+FFFD. JSON output is never passed through it: it
// stays exact (its encoder escapes control characters already).
func safe(s string) string {
	if !needsSanitising(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + '@')
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r < 0xa0, isBidiControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safeLine is safe for text shown on one line (a table cell, a progress
// message): newlines are shown as ^J too.
func safeLine(s string) string {
	return strings.ReplaceAll(safe(s), "\n", "^J")
}

func needsSanitising(s string) bool {
	for i, r := range s {
		switch {
		case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0, isBidiControl(r):
			return true
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return true
			}
		}
	}
	return false
}

// isBidiControl reports the explicit directional formatting characters
// (embeddings, overrides, isolates), which can make text read otherwise
// than it is.
func isBidiControl(r rune) bool {
	return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
