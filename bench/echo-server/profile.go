//go:build ferryprof

package main

import (
	"log"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

// With FERRY_CPUPROFILE set, the run is profiled under the harness's
// load; the profile is written when stdin ends (stdio) or on SIGTERM.
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
	stopProfile = pprof.StopCPUProfile
	go func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM, os.Interrupt)
		<-c
		pprof.StopCPUProfile()
		os.Exit(0)
	}()
}
