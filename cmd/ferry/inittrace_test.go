package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Budgets for what the packages linked into ferry do at initialisation,
// before main runs: on every invocation, "ferry tools" as much as "ferry
// serve". Every package whose init runs brings its code and the type data
// it touches into memory, so the count of such packages and what they
// allocate track the command's start-up memory: at a12c33f, 95 packages
// and 321 allocations (9 MB peak RSS for "ferry tools"); with the agent's
// model SDKs, Prometheus and OpenTelemetry linked, 242 packages and about
// 6,090 allocations (27 MB), of which gRPC, linked only by
// OpenTelemetry's OTLP/HTTP exporter, was 58 packages (6 MB): with
// observe/otlp in its place, 184 packages and 4,680 allocations; with
// the agent's own provider clients in place of the SDKs, 150 packages,
// 2,094 allocations and 319 kB. The figures are counted by the runtime
// (GODEBUG=inittrace=1), the same from run to run within a few
// allocations; each budget leaves about 10% for the dependencies' own
// growth. A new dependency with a costly init fails this test: raise a
// budget only knowing what it costs (see the table the failure prints).
const (
	maxInitPackages = 165
	maxInitAllocs   = 2300
	maxInitBytes    = 350_000
	// What ferry's own packages allocate at init: tables built by code.
	// Make such a table static data, or build it when it is first used.
	maxOwnInitAllocs = 120
	maxOwnInitBytes  = 16 << 10
)

// initRecord is one line of GODEBUG=inittrace=1: a package's init.
type initRecord struct {
	pkg           string
	bytes, allocs int64
}

// TestInitBudget runs "ferry --help" with GODEBUG=inittrace=1 and holds
// the package initialisation the runtime reports to the budgets above.
func TestInitBudget(t *testing.T) {
	recs := initTrace(t, ferryBin, "--help")
	var all, own initRecord
	var ours []initRecord
	for _, r := range recs {
		all.bytes += r.bytes
		all.allocs += r.allocs
		if r.pkg == "main" || strings.HasPrefix(r.pkg, "github.com/ferrymcp/ferry/") {
			own.bytes += r.bytes
			own.allocs += r.allocs
			ours = append(ours, r)
		}
	}
	t.Logf("%d packages run an init: %d allocations, %d bytes; ferry's own: %d allocations, %d bytes",
		len(recs), all.allocs, all.bytes, own.allocs, own.bytes)
	var over []string
	if len(recs) > maxInitPackages {
		over = append(over, fmt.Sprintf("%d packages run an init, budget %d", len(recs), maxInitPackages))
	}
	if all.allocs > maxInitAllocs {
		over = append(over, fmt.Sprintf("%d allocations at init, budget %d", all.allocs, maxInitAllocs))
	}
	if all.bytes > maxInitBytes {
		over = append(over, fmt.Sprintf("%d bytes allocated at init, budget %d", all.bytes, maxInitBytes))
	}
	if own.allocs > maxOwnInitAllocs {
		over = append(over, fmt.Sprintf("ferry's own packages allocate %d times at init, budget %d", own.allocs, maxOwnInitAllocs))
	}
	if own.bytes > maxOwnInitBytes {
		over = append(over, fmt.Sprintf("ferry's own packages allocate %d bytes at init, budget %d", own.bytes, maxOwnInitBytes))
	}
	if len(over) > 0 {
		t.Errorf("start-up over budget:\n  %s\nthe costliest inits:\n%sferry's own:\n%s",
			strings.Join(over, "\n  "), costliest(recs, 15), costliest(ours, 5))
	}
}

// initTrace runs bin with args and GODEBUG=inittrace=1 and returns the
// inits it reports.
func initTrace(t *testing.T, bin string, args ...string) []initRecord {
	t.Helper()
	cmd := exec.Command(bin, args...)
	godebug := "inittrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, stderr.String())
	}
	recs, err := parseInitTrace(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	// The runtime and the packages every Go program links report some
	// twenty lines; fewer means the trace was not read.
	if len(recs) < 20 {
		t.Fatalf("only %d init lines in the output of GODEBUG=inittrace=1:\n%s", len(recs), stderr.String())
	}
	return recs
}

// parseInitTrace reads the lines the runtime writes for
// GODEBUG=inittrace=1, such as
//
//	init net/http @7.4 ms, 0.024 ms clock, 4712 bytes, 49 allocs
//
// and skips the others (the command's own output on stderr).
func parseInitTrace(s string) ([]initRecord, error) {
	var recs []initRecord
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "init ") || !strings.HasSuffix(line, " allocs") {
			continue
		}
		var r initRecord
		var at, clock float64
		if _, err := fmt.Sscanf(line, "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &r.pkg, &at, &clock, &r.bytes, &r.allocs); err != nil {
			return nil, fmt.Errorf("an inittrace line not understood: %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// costliest lists the n inits that allocate most, one a line.
func costliest(recs []initRecord, n int) string {
	recs = slices.Clone(recs)
	slices.SortFunc(recs, func(a, b initRecord) int { return int(b.bytes - a.bytes) })
	var b strings.Builder
	for _, r := range recs[:min(n, len(recs))] {
		fmt.Fprintf(&b, "  %8d bytes %6d allocs  %s\n", r.bytes, r.allocs, r.pkg)
	}
	return b.String()
}

// TestParseInitTrace: the lines of the runtime's inittrace are read, and
// the command's own output between them is skipped.
func TestParseInitTrace(t *testing.T) {
	recs, err := parseInitTrace("init internal/bytealg @0.004 ms, 0.002 ms clock, 0 bytes, 0 allocs\n" +
		"ferry: a line of the command's own\n" +
		"init github.com/openai/openai-go/v3 @9.0 ms, 0.47 ms clock, 143360 bytes, 1057 allocs\n")
	want := []initRecord{{"internal/bytealg", 0, 0}, {"github.com/openai/openai-go/v3", 143360, 1057}}
	if err != nil || !slices.Equal(recs, want) {
		t.Errorf("got %v, %v; want %v", recs, err, want)
	}
	if _, err := parseInitTrace("init main @x ms, 0.1 ms clock, 1 bytes, 1 allocs"); err == nil {
		t.Error("a malformed line was accepted")
	}
}
