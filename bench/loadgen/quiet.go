package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
)

// quietCmd waits, up to -max-wait, for a quarter second in which the
// machine's CPU use stays below -below percent of one core, and prints
// what it saw: benchmark figures taken on a busy machine are not
// comparable, and the result files say how busy it was.
func quietCmd(args []string) error {
	fs := flag.NewFlagSet("loadgen quiet", flag.ExitOnError)
	maxWait := fs.Duration("max-wait", 5*time.Second, "longest wait")
	below := fs.Float64("below", 10, "percent of one core the machine may use")
	fs.Parse(args)
	end := time.Now().Add(*maxWait)
	for {
		b0, t0 := harness.MachineBusy(), time.Now()
		time.Sleep(250 * time.Millisecond)
		pct := 100 * float64(harness.MachineBusy()-b0) / float64(time.Since(t0).Microseconds())
		if pct < *below || time.Now().After(end) {
			fmt.Fprintf(os.Stderr, "quiet: machine at %.0f %% of a core\n", pct)
			return nil
		}
	}
}
