package client_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/ferrymcp/ferry/internal/racecheck"
	"github.com/ferrymcp/ferry/protocol"
)

// TestToolsCallBudget holds a tools/call round trip over the in-memory
// transport, client and server together, to its budget: 40 allocations
// and 6 KiB for a small call, and for a 64 KiB echo no more than three
// payloads' worth of allocated bytes. (The payload is copied twice on the
// way: once into the request message and once into the response; both
// ends' decoders alias large strings in the message buffers.)
func TestToolsCallBudget(t *testing.T) {
	if racecheck.Enabled {
		t.Skip("the race detector allocates on its own")
	}
	const payload64K = 64 << 10
	for _, c := range []struct {
		era               string
		version           string
		size              int
		maxAllocs, maxMem float64
	}{
		{"legacy", protocol.Version20251125, 20, 40, 6 << 10},
		{"stateless", protocol.Version20260728, 20, 40, 6 << 10},
		{"legacy", protocol.Version20251125, payload64K, 40, 3 * payload64K},
		{"stateless", protocol.Version20260728, payload64K, 40, 3 * payload64K},
	} {
		t.Run(fmt.Sprintf("%s/%dB", c.era, c.size), func(t *testing.T) {
			cl := benchClient(t, inMemory, c.version)
			args := &echoIn{Message: strings.Repeat("x", c.size)}
			ctx := context.Background()
			call := func() {
				res, err := cl.Call(ctx, "echo", args)
				if err != nil || len(res.Content) != 1 || len(res.Content[0].Text) != c.size {
					t.Fatalf("%v %v", res, err)
				}
			}
			for range 100 { // warm the pools and caches
				call()
			}
			const runs = 500
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				call()
			}
			runtime.ReadMemStats(&after)
			allocs := float64(after.Mallocs-before.Mallocs) / runs
			mem := float64(after.TotalAlloc-before.TotalAlloc) / runs
			t.Logf("%.1f allocations, %.0f bytes per call", allocs, mem)
			if allocs > c.maxAllocs || mem > c.maxMem {
				t.Errorf("%.1f allocations and %.0f bytes per call: budget %.0f and %.0f", allocs, mem, c.maxAllocs, c.maxMem)
			}
		})
	}
}
