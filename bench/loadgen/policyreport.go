package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// policyRows are the rows of scripts/bench-gateway.sh that measure what
// the gateway's policy costs (issue 34): ferry serve as a caller's
// gateway, each beside the row it differs from by one thing.
var policyRows = []struct{ impl, base, adds string }{
	{"ferry-serve-token", "ferry-serve", "callers from a token file"},
	{"ferry-serve-rules", "ferry-serve-token", "four access rules"},
	{"ferry-serve-view", "ferry-serve-token", "the rules, called through a view (renamed, one fixed argument)"},
	{"ferry-serve-audit", "ferry-serve-token", "the rules and an audit file"},
}

// policyCosts writes, for each era with policy rows, each row's calls/s
// as a percentage of its base row's and its CPU per call against the
// base's: the cost of a rule, of a view, of an audit record.
func policyCosts(w io.Writer, rs results) {
	header := false
	for _, era := range eras {
		t := rs.where("gateway", era, "http")
		for _, p := range policyRows {
			r, base := t.impl(p.impl), t.impl(p.base)
			if r == nil || base == nil {
				continue
			}
			if !header {
				fmt.Fprint(w, "\n## The cost of the gateway's policy\n\n")
				fmt.Fprint(w, "Each row's calls/s as a percentage of the row it adds one thing to, then its CPU per call (the server's, with its children) against that row's; same run, closed loop.\n\n")
				fmt.Fprint(w, "| era | impl | adds to | what it adds |")
				for _, c := range cells {
					fmt.Fprintf(w, " %s |", c)
				}
				fmt.Fprint(w, "\n|---|---|---|---|", strings.Repeat("---:|", len(cells)), "\n")
				header = true
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |", era, p.impl, p.base, p.adds)
			for _, c := range cells {
				fmt.Fprintf(w, " %s |", costText(phase(r, c, "closed"), phase(base, c, "closed")))
			}
			fmt.Fprintln(w)
		}
	}
}

// costText is "97 % · CPU +4 %": p's rate as a percentage of base's and
// the change of its CPU per call; "-" where either was not measured.
func costText(p, base *harness.Phase) string {
	if p == nil || base == nil || p.Verified == 0 || base.Verified == 0 || base.CallsPerS == 0 {
		return "-"
	}
	s := fmt.Sprintf("**%.0f %%**", 100*p.CallsPerS/base.CallsPerS)
	if base.ServerCPUus > 0 && p.ServerCPUus > 0 {
		s += fmt.Sprintf(" · CPU %+.0f %%", 100*(p.ServerCPUus/base.ServerCPUus-1))
	}
	return s
}
