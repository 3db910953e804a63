package shared

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The Redis client is redigo, one package that links nothing outside
// the standard library: go-redis v9.23.0's one package took 1.3 GB and
// 25 CPU s to compile, the peak of ferry's cold build
// (bench/results/2026-11-29-redis-client-build-cost.md). Another import
// from outside ferry and the standard library would bring such a cost
// back.
func TestRedisClientIsRedigoAlone(t *testing.T) {
	const client = "github.com/gomodule/redigo/redis"
	if got := goList(t, "-f", `{{join .Imports "\n"}}`, "."); !slices.Equal(got, []string{client}) {
		t.Errorf("gateway/shared imports %q from outside ferry and the standard library, want %s alone", got, client)
	}
	if got := goList(t, "-deps", client); !slices.Equal(got, []string{client}) {
		t.Errorf("%s links %q, want the standard library alone", client, got)
	}
}

// goList runs go list with args and returns the packages it prints that
// are neither ferry's nor the standard library's (whose first element
// has no dot).
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	var outside []string
	for _, p := range strings.Fields(string(out)) {
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && !strings.HasPrefix(p, "github.com/ferrymcp/ferry/") {
			outside = append(outside, p)
		}
	}
	return outside
}
