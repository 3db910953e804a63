package main

import (
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// compare pairs each cell of two runs and writes both figures and
// new/old: the side under test's CPU (the client's for clients), "-"
// where a run lacks the cell, "failed" where no call was verified, and
// the geometric mean only over cells measured at both.
func TestCompare(t *testing.T) {
	ph := func(conc int, payload string, rate, p99, server, driver float64) harness.Phase {
		return harness.Phase{Conc: conc, Payload: payload, Mode: "closed", Calls: 10, Verified: 10,
			CallsPerS: rate, P99us: p99, ServerCPUus: server, DriverCPUus: driver, OtherCPUPct: 5}
	}
	res := func(suite, role, impl string, phases ...harness.Phase) *harness.Result {
		return &harness.Result{Suite: suite, Role: role, Impl: impl, Era: "legacy", Transport: "stdio", Phases: phases}
	}
	failed := harness.Phase{Conc: 16, Payload: "large", Mode: "closed", Calls: 3, Errors: 3, FirstError: "boom"}
	old := results{
		res("servers", "server", "ferry", ph(1, "small", 1000, 200, 40, 9), ph(16, "small", 4000, 800, 20, 9), failed),
		res("clients", "client", "ferry", ph(1, "small", 2000, 100, 9, 30)),
	}
	cur := results{
		res("servers", "server", "ferry", ph(1, "small", 1500, 100, 20, 9), ph(16, "large", 500, 9000, 300, 9)),
		res("clients", "client", "ferry", ph(1, "small", 1000, 400, 9, 60)),
	}
	var b strings.Builder
	compare(&b, build{"b211c63", old}, build{"abc1234", cur})
	md := b.String()
	for _, tc := range []struct{ what, want string }{
		{"header", "| suite | impl | era | transport | cell | calls/s b211c63 | calls/s abc1234 | × | p99 µs b211c63 | p99 µs abc1234 | × | CPU µs/call b211c63 | CPU µs/call abc1234 | × | other CPU |"},
		{"cell at both", "| servers | ferry | legacy | stdio | c1 20 B | 1,000 | 1,500 | 1.50 | 200 | 100 | 0.50 | 40.0 | 20.0 | 0.50 | 5 % / 5 % |"},
		{"cell at old only", "| servers | ferry | legacy | stdio | c16 20 B | 4,000 | - | - | 800 | - | - | 20.0 | - | - | 5 % / - |"},
		{"failed at old", "| servers | ferry | legacy | stdio | c16 64 KiB | failed | 500 | - | failed | 9,000 | - | failed | 300 | - | 0 % / 5 % |"},
		{"client's own CPU", "| clients | ferry | legacy | stdio | c1 20 B | 2,000 | 1,000 | 0.50 | 100 | 400 | 4.00 | 30.0 | 60.0 | 2.00 | 5 % / 5 % |"},
		{"mean over cells at both", "| servers | ferry | 1 | 1.50 | 0.50 | 0.50 |"},
		{"mean of clients", "| clients | ferry | 1 | 0.50 | 4.00 | 2.00 |"},
		{"problems of old", "## Problems at b211c63\n\n- servers ferry legacy stdio c16 64 KiB (closed): 3 errors, 0 mismatches; first: boom"},
		{"problems of new", "## Problems at abc1234\n\nNone: every call"},
	} {
		if !strings.Contains(md, tc.want) {
			t.Errorf("%s: report lacks %q:\n%s", tc.what, tc.want, md)
		}
	}
	if strings.Contains(md, "c1 64 KiB") {
		t.Errorf("a cell neither run has is in the table:\n%s", md)
	}
}

func TestCompareCmdNeedsTwoFiles(t *testing.T) {
	for _, args := range [][]string{{"a.jsonl"}, {"-labels", "x", "a.jsonl", "b.jsonl"}} {
		if err := compareCmd(args); err == nil || !strings.Contains(err.Error(), "two result files") {
			t.Errorf("compare %q: err = %v, want a usage error", args, err)
		}
	}
}
