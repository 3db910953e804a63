//go:build ferryprof

package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// With FERRY_CPUPROFILE set, the client's run is CPU-profiled under the
// harness's load. Off by default: linking runtime/pprof turns on the
// runtime's memory profiling, which costs resident memory.
func init() {
	path := os.Getenv("FERRY_CPUPROFILE")
	if path == "" {
		return
	}
	profiled = func(run func() int) int {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
		return run()
	}
}
