// Command idle-sessions measures the memory that idle legacy sessions
// cost ferry serve: it starts `ferry serve -- ECHO` on a free loopback
// port, opens N Streamable HTTP sessions (initialize, then
// notifications/initialized, each session then left alone, without a GET
// stream), and reports the resident memory of the ferry serve process
// before and after, per session. scripts/bench-gateway.sh runs it. With
// -url it opens the sessions there instead (replicas behind a balancer,
// started by scripts/bench-scale.sh) and reports the memory of each
// process of -pids.
//
//	idle-sessions -ferry bin/ferry -echo bin/ferry-server-stdio -n 10000
//	idle-sessions -url http://127.0.0.1:8080 -pids 1234,1235 -n 10000
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	ferry := flag.String("ferry", "bin/ferry", "the ferry command")
	echo := flag.String("echo", "bin/ferry-server-stdio", "the stdio server behind it")
	n := flag.Int("n", 10000, "sessions to open")
	workers := flag.Int("workers", 8, "sessions opened at once")
	url := flag.String("url", "", "open the sessions at this base URL (http://HOST:PORT) instead of starting ferry serve")
	pidList := flag.String("pids", "", "with -url: the processes whose memory to report, comma-separated")
	flag.Parse()

	base, pids := *url, []int{}
	if base == "" {
		pid, addr, stop := startFerry(*ferry, *echo, *n)
		defer stop()
		base, pids = "http://"+addr, []int{pid}
	}
	for p := range strings.SplitSeq(*pidList, ",") {
		if pid, err := strconv.Atoi(strings.TrimSpace(p)); err == nil {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		log.Fatal("-url needs -pids")
	}
	waitReady(base)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers}}
	// One session first, so that what every session shares is allocated.
	if err := open(hc, base); err != nil {
		log.Fatal(err)
	}
	time.Sleep(time.Second)
	before := rssOf(pids)
	start := time.Now()
	var next, failed atomic.Int64
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for next.Add(1) <= int64(*n) {
				if err := open(hc, base); err != nil {
					if failed.Add(1) == 1 {
						log.Print(err)
					}
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	time.Sleep(2 * time.Second)
	after := rssOf(pids)
	opened := int64(*n) - failed.Load()
	fmt.Printf("- %d idle legacy sessions opened in %v (%d failed)\n", opened, took.Round(time.Millisecond), failed.Load())
	what, indent := "ferry serve", ""
	for i, pid := range pids {
		if len(pids) > 1 {
			what, indent = fmt.Sprintf("process %d of %d (pid %d)", i+1, len(pids), pid), "  "
		}
		fmt.Printf("- %s resident memory: %.1f MiB with one session, %.1f MiB with %d more\n", what, float64(before[i])/1024, float64(after[i])/1024, opened)
		if opened > 0 {
			fmt.Printf("%s- per idle session: %.1f KiB\n", indent, float64(after[i]-before[i])/float64(opened))
		}
	}
}

// startFerry starts `ferry serve -- ECHO` on a free loopback port, bound
// to 2n sessions, and returns its pid, its address and how to stop it.
func startFerry(ferry, echo string, n int) (int, string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(ferry, "serve", "--prefix", "never", "--no-metrics", "--addr", addr,
		"--max-sessions", strconv.Itoa(2*n), "--", echo)
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	return cmd.Process.Pid, addr, func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}

// waitReady waits up to 30 s for base's /readyz to answer 200.
func waitReady(base string) {
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			log.Fatal(base + " did not get ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// open opens one legacy session and leaves it idle.
func open(hc *http.Client, base string) error {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || id == "" {
		return fmt.Errorf("initialize: %s, session %q", resp.Status, id)
	}
	req, _ = http.NewRequest("POST", base+"/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	resp, err = hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		return fmt.Errorf("initialized: %s", resp.Status)
	}
	return nil
}

// rssOf returns the resident memory of each process in KiB.
func rssOf(pids []int) []int64 {
	out := make([]int64, len(pids))
	for i, p := range pids {
		out[i] = rss(p)
	}
	return out
}

// rss returns the resident memory of a process in KiB.
func rss(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}
