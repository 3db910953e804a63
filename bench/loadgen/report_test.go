package main

import (
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// The scale suite (scripts/bench-scale.sh) has its tables, its ceiling
// (one replica, direct) and its panels in the chart, in both eras.
func TestReportScaleSuite(t *testing.T) {
	row := func(impl, era string, rate float64) *harness.Result {
		return &harness.Result{Suite: "scale", Role: "server", Impl: impl, Era: era, Transport: "http",
			Phases: []harness.Phase{{Conc: 1, Payload: "small", Mode: "closed", Calls: 10, Verified: 10, CallsPerS: rate, P50us: 100, P99us: 200, P999us: 300}}}
	}
	var rs results
	for _, era := range eras {
		rs = append(rs, row("1-replica", era, 1000), row("1-replica-haproxy", era, 800), row("2-replicas-haproxy", era, 700))
	}
	var b strings.Builder
	report(&b, rs, parseCeilings(defaultCeilings), "ferry")
	md := b.String()
	for _, want := range []string{
		"## Replicas of ferry serve sharing Redis, over Streamable HTTP: legacy, http",
		"## Replicas of ferry serve sharing Redis, over Streamable HTTP: 2026-07-28, http",
		"calls/s, % of `1-replica`",
		"| 2-replicas-haproxy | **700** · 70 %<br>100 / 200 / 300 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	svg := chart(rs, "t")
	if n := strings.Count(svg, "Replicas of ferry serve sharing Redis"); n != 2 {
		t.Errorf("chart has %d panels of the scale suite, want 2", n)
	}
}
