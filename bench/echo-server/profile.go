//go:build ferryprof

package main

import (
	"log"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

// With FERRY_CPUPROFILE set, the run is profiled under the harness's
// load; with FERRY_MEMPROFILE, every allocation of 4 KiB or more is
// sampled. The profiles are written when stdin ends (stdio) or on SIGTERM.
func init() {
	cpu, mem := os.Getenv("FERRY_CPUPROFILE"), os.Getenv("FERRY_MEMPROFILE")
	if cpu == "" && mem == "" {
		return
	}
	var stops []func()
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		stops = append(stops, pprof.StopCPUProfile)
	}
	if mem != "" {
		runtime.MemProfileRate = 4 << 10
		stops = append(stops, func() {
			f, err := os.Create(mem)
			if err != nil {
				log.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Fatal(err)
			}
		})
	}
	stopProfile = func() {
		for _, stop := range stops {
			stop()
		}
	}
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, os.Interrupt)
		<-c
		stopProfile()
		os.Exit(0)
	}()
}
