package main

import (
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// The policy rows of scripts/bench-gateway.sh get a table of their cost:
// each row's rate as a percentage of the row it adds one thing to, and
// its CPU per call against that row's, per era; a cell measured on one
// side only is "-".
func TestReportPolicyCosts(t *testing.T) {
	row := func(impl, era string, rate, cpu float64) *harness.Result {
		return &harness.Result{Suite: "gateway", Role: "server", Impl: impl, Era: era, Transport: "http",
			Phases: []harness.Phase{{Conc: 16, Payload: "small", Mode: "closed", Calls: 10, Verified: 10, CallsPerS: rate, ServerCPUus: cpu, P50us: 1}}}
	}
	rs := results{
		row("ferry-http", "legacy", 12000, 50),
		row("ferry-serve", "legacy", 8000, 100),
		row("ferry-serve-token", "legacy", 7800, 104),
		row("ferry-serve-rules", "legacy", 7020, 110),
		row("ferry-serve-view", "legacy", 6240, 130),
		row("ferry-serve-token", "2026-07-28", 9000, 90),
		row("ferry-serve-audit", "2026-07-28", 6750, 117),
	}
	rs[4].Phases = append(rs[4].Phases, harness.Phase{Conc: 1, Payload: "small", Mode: "closed", Calls: 5, Verified: 5, CallsPerS: 900})
	var b strings.Builder
	report(&b, rs, parseCeilings(defaultCeilings), "ferry")
	md := b.String()
	for _, want := range []string{
		"## The cost of the gateway's policy",
		"| era | impl | adds to | what it adds | c1 20 B | c16 20 B | c1 64 KiB | c16 64 KiB |",
		"| legacy | ferry-serve-token | ferry-serve | callers from a token file | - | **98 %** · CPU +4 % | - | - |",
		"| legacy | ferry-serve-rules | ferry-serve-token | four access rules | - | **90 %** · CPU +6 % | - | - |",
		"| legacy | ferry-serve-view | ferry-serve-token | the rules, called through a view (renamed, one fixed argument) | - | **80 %** · CPU +25 % | - | - |",
		"| 2026-07-28 | ferry-serve-audit | ferry-serve-token | the rules and an audit file | - | **75 %** · CPU +30 % | - | - |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, absent := range []string{"| 2026-07-28 | ferry-serve-token |", "| legacy | ferry-serve-audit |"} {
		if strings.Contains(md, absent) {
			t.Errorf("report has a row without its base or without its own runs: %q", absent)
		}
	}
	if strings.Count(md, "## The cost of the gateway's policy") != 1 {
		t.Error("the cost table is not one table")
	}
}

// A report without the policy rows has no cost table.
func TestReportNoPolicyCosts(t *testing.T) {
	rs := results{{Suite: "gateway", Impl: "ferry-serve", Era: "legacy", Transport: "http"}}
	var b strings.Builder
	report(&b, rs, parseCeilings(defaultCeilings), "ferry")
	if strings.Contains(b.String(), "cost of the gateway's policy") {
		t.Errorf("a cost table without policy rows:\n%s", b.String())
	}
}
