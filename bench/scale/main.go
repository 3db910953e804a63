// Command scale runs the replicas of scripts/bench-scale.sh and
// scripts/soak-scale.sh: `ferry serve --redis` processes sharing one
// Redis, alone or behind HAProxy (round-robin, health checks on /readyz,
// as deploy/haproxy/haproxy.cfg), optionally restarting one replica in
// turn every so often (SIGTERM, then the same command again); and it
// reads what the scripts report of them (resident memory, Redis's
// memory and commands).
//
//	scale up -ferry bin/ferry -echo ECHO -redis unix:///s.sock -replicas 2 -haproxy -port 8080 -state DIR
//	scale sample -state DIR -redis-sock S     one JSON object: each replica's pid and RSS, Redis used_memory
//	scale commandstats -redis-sock S          Redis's commands so far, "NAME CALLS" a line
//	scale per-call -before F -after F RESULT  Redis commands per call of a loadgen result line (markdown)
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: scale up|sample|commandstats|per-call [flags]")
		os.Exit(2)
	}
	var err error
	switch args := os.Args[2:]; os.Args[1] {
	case "up":
		err = upCmd(args)
	case "sample":
		err = sampleCmd(args)
	case "commandstats":
		err = commandStatsCmd(args)
	case "per-call":
		err = perCallCmd(args)
	default:
		err = fmt.Errorf("unknown command %q: up, sample, commandstats or per-call", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}
