//go:build ferryprof

package main

import (
	"log"
	"os"
	"runtime/pprof"
)

// With the ferryprof build tag and FERRY_CPUPROFILE set, ferry writes a
// CPU profile of its run (ferry serve under the gateway benchmark's load),
// stopped by stopProfile when the command returns.
func init() {
	path := os.Getenv("FERRY_CPUPROFILE")
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	stopProfile = func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
