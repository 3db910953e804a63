package agent

import (
	"regexp"
	"strings"
	"testing"
)

// validResultID and safeID say what the regular expressions they
// replace said (written without regexp so that the package's start-up
// compiles nothing).
func TestResultIDs(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)
	unsafe := regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
	for _, id := range []string{"", "a", "srv__dump-c1", "_a", ".a", "-a", "a/b", "../x", "a b", "ä", "a.txt",
		strings.Repeat("a", 100), strings.Repeat("a", 101), "a\x00", "call_1", "A9._-"} {
		if got, want := validResultID(id), valid.MatchString(id); got != want {
			t.Errorf("validResultID(%q) = %v, the regexp says %v", id, got, want)
		}
		if got, want := safeID(id), unsafe.ReplaceAllString(id, "_"); got != want {
			t.Errorf("safeID(%q) = %q, the regexp gives %q", id, got, want)
		}
	}
}
