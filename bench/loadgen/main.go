// Command loadgen is the load generator of ferry's benchmark. It drives
// any MCP server over stdio or Streamable HTTP, in the legacy era or in
// 2026-07-28, checks every answer, and appends one JSON line per run;
// it also renders the lines as markdown tables (report), two runs of the
// same cells side by side (compare) and as an SVG chart (chart), and waits
// for a quiet machine (quiet).
//
//	loadgen run -impl NAME -era legacy -stdio "CMD"
//	loadgen run -impl NAME -era 2026-07-28 -url http://127.0.0.1:{PORT}/mcp -spawn "CMD -port {PORT}"
//	loadgen run -impl NAME -url http://127.0.0.1:9000/mcp -server-pid 1234
//	loadgen report [-title T] FILE.jsonl...
//	loadgen chart -o FILE.svg FILE.jsonl...
//	loadgen compare -labels OLD,NEW OLD.jsonl NEW.jsonl
//	loadgen soak -url http://127.0.0.1:8080/mcp -clients 500 -duration 30m -sample-cmd "CMD" -out FILE.jsonl
//	loadgen soak-report FILE.jsonl
//	loadgen quiet [-max-wait 5s] [-below 10]
//	loadgen freeport
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: loadgen run|report|compare|chart|soak|soak-report|quiet|freeport [flags]")
		os.Exit(2)
	}
	var err error
	switch args := os.Args[2:]; os.Args[1] {
	case "run":
		err = runCmd(args)
	case "report":
		err = reportCmd(args)
	case "compare":
		err = compareCmd(args)
	case "chart":
		err = chartCmd(args)
	case "soak":
		err = soakCmd(args)
	case "soak-report":
		err = soakReportCmd(args)
	case "quiet":
		err = quietCmd(args)
	case "freeport":
		var port string
		if port, err = freePort(); err == nil {
			fmt.Println(port)
		}
	default:
		err = fmt.Errorf("unknown command %q: run, report, compare, chart, soak, soak-report, quiet or freeport", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
