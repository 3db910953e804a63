//go:build ferryprof

package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// With FERRY_CPUPROFILE set, the client's run is CPU-profiled under the
// harness's load; with FERRY_MEMPROFILE, every allocation of 1 KiB or
// more is sampled. Off by default: linking runtime/pprof turns on the
// runtime's memory profiling, which costs resident memory.
func init() {
	cpu, mem := os.Getenv("FERRY_CPUPROFILE"), os.Getenv("FERRY_MEMPROFILE")
	if cpu == "" && mem == "" {
		return
	}
	profiled = func(run func() int) int {
		if cpu != "" {
			f, err := os.Create(cpu)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			defer pprof.StopCPUProfile()
		}
		if mem != "" {
			runtime.MemProfileRate = 1 << 10
			defer func() {
				f, err := os.Create(mem)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
				defer f.Close()
				if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
					fmt.Fprintln(os.Stderr, err)
				}
			}()
		}
		return run()
	}
}
