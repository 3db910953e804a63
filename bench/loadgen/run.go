package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// runCmd measures one server in one era over one transport.
func runCmd(args []string) error {
	var f harness.Flags
	fs := flag.NewFlagSet("loadgen run", flag.ExitOnError)
	f.Register(fs)
	spawn := fs.String("spawn", "", "HTTP server command line with {PORT}, started by loadgen")
	cold := fs.Int("cold", 3, "extra spawns for the cold-start figure (spawn → handshake answered)")
	tool := fs.String("tool", wire.EchoTool, "over HTTP, the name the server shows the echo tool under (a gateway's view renames it)")
	tokenFile := fs.String("token-file", "", "over HTTP, send the first token of `FILE` (a ferry serve --token-file: TOKEN [CALLER [ROLE...]] a line) as the bearer token")
	fs.Parse(args)
	era, err := wire.ParseEra(f.Era)
	if err != nil {
		return err
	}
	opts, err := httpOptions(f.Stdio != "", *tool, *tokenFile)
	if err != nil {
		return err
	}
	plan, err := f.Plan()
	if err != nil {
		return err
	}
	transport, target := "stdio", f.Stdio
	if f.Stdio == "" {
		transport, target = "http", f.URL
		if *spawn != "" {
			target = *spawn
		}
	}
	r := f.NewResult("server", transport, target, "loadgen")
	r.RSSOf = "server"
	s, err := open(&f, era, opts, *spawn, *cold, plan.MaxConc(), r)
	if err != nil {
		r.Fatal, r.Errors = err.Error(), 1
		return errors.Join(err, r.Write(f.Out))
	}
	plan.Server = harness.Tree(s.pid)
	r.Protocol = s.conn.Protocol()
	r.Phases = harness.Run(s.conn, plan)
	r.Body = s.conn.Body()
	r.PeakRSSKB = harness.PeakRSS(harness.Tree(s.pid))
	if st, ok := s.conn.(*wire.Stdio); ok {
		r.Unmatched = st.Unmatched.Load()
	}
	s.close()
	r.Finish()
	return r.Write(f.Out)
}

// server is the connection to the server under test and how to end it.
type server struct {
	conn  wire.Conn
	pid   int
	close func()
}

// open connects to the server, spawning it cold+1 times when loadgen
// starts it and keeping the last; the median spawn → handshake time is
// the cold start.
func open(f *harness.Flags, era wire.Era, opts wire.HTTPOptions, spawn string, cold, conc int, r *harness.Result) (*server, error) {
	if f.Stdio == "" && spawn == "" {
		h, err := wire.DialHTTPWith(f.URL, era, conc, f.CallTimeout, opts)
		if err != nil {
			return nil, err
		}
		return &server{conn: h, pid: f.ServerPID, close: func() { h.Close() }}, nil
	}
	var times []float64
	for i := 0; ; i++ {
		start := time.Now()
		s, err := spawnOnce(f, era, opts, spawn, conc)
		if err != nil {
			return nil, err
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
		if i == cold {
			slices.Sort(times)
			r.ColdStartMs, r.ColdMinMs, r.ColdMaxMs = times[len(times)/2], times[0], times[len(times)-1]
			r.ColdSamples = len(times)
			return s, nil
		}
		s.close()
	}
}

func spawnOnce(f *harness.Flags, era wire.Era, opts wire.HTTPOptions, spawn string, conc int) (*server, error) {
	if f.Stdio != "" {
		st, err := wire.SpawnStdio(f.Stdio, era, conc, f.CallTimeout)
		if err != nil {
			return nil, err
		}
		return &server{conn: st, pid: st.Pid(), close: func() { st.Close() }}, nil
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("sh", "-c", "exec "+strings.ReplaceAll(spawn, "{PORT}", port))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its children end with it
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() { stopGroup(cmd.Process.Pid, exited) }
	h, err := dialUntilUp(strings.ReplaceAll(f.URL, "{PORT}", port), era, opts, conc, f.CallTimeout, exited)
	if err != nil {
		stop()
		return nil, err
	}
	return &server{conn: h, pid: cmd.Process.Pid, close: func() { h.Close(); stop() }}, nil
}

// dialUntilUp polls the server every millisecond until its handshake is
// answered, it exits, or 20 seconds pass.
func dialUntilUp(url string, era wire.Era, opts wire.HTTPOptions, conc int, timeout time.Duration, exited <-chan struct{}) (*wire.HTTP, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		h, err := wire.DialHTTPWith(url, era, conc, timeout, opts)
		if err == nil {
			return h, nil
		}
		if !errors.Is(err, wire.ErrFatal) || time.Now().After(deadline) {
			return nil, err // the server answered and refused, or never came up
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("the server exited before answering: %w", err)
		case <-time.After(time.Millisecond):
		}
	}
}

// httpOptions are the -tool and -token-file of a run, which only an HTTP
// server (a gateway) can need: over stdio they are refused, not ignored.
func httpOptions(stdio bool, tool, tokenFile string) (wire.HTTPOptions, error) {
	opts := wire.HTTPOptions{Tool: tool}
	if stdio && (tool != wire.EchoTool || tokenFile != "") {
		return opts, errors.New("-tool and -token-file are for a server over HTTP (-url)")
	}
	if tokenFile == "" {
		return opts, wire.CheckToolName(tool)
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return opts, fmt.Errorf("-token-file: %w", err)
	}
	if opts.Bearer = firstToken(string(b)); opts.Bearer == "" {
		return opts, fmt.Errorf("-token-file %s: no token", tokenFile)
	}
	return opts, wire.CheckToolName(tool)
}

// firstToken is the token of the first line of a token file that has one,
// as ferry serve reads the file: blank lines and lines starting with #
// skipped, the token the line's first word.
func firstToken(file string) string {
	for line := range strings.Lines(file) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			return f[0]
		}
	}
	return ""
}

// stopGroup ends the process group of pid: SIGTERM, then SIGKILL after 3 s.
func stopGroup(pid int, exited <-chan struct{}) {
	syscall.Kill(-pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
	syscall.Kill(-pid, syscall.SIGKILL) // children that outlived their parent
}

// freePort returns a loopback port nothing listens on now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}
