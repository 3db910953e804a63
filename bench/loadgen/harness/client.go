package harness

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

// ClientConn is an SDK client connected to the peer server.
type ClientConn struct {
	Caller
	Close     func()
	Protocol  string
	ServerPID int // the spawned server over stdio, when the SDK tells
}

// ClientMain is the main function of a client program: it reads the
// flags (the server is -stdio CMD or -url URL; the SDK connects to it in
// the -era asked for), connects, runs the phases and writes the result
// line with the client as the implementation under test. It returns the
// exit status.
func ClientMain(impl string, connect func(f *Flags, maxConc int) (*ClientConn, error)) int {
	var f Flags
	fs := flag.NewFlagSet(impl+"-client", flag.ExitOnError)
	f.Register(fs)
	fs.Parse(os.Args[1:])
	f.Impl = impl
	transport, target := "stdio", f.Stdio
	if f.URL != "" {
		transport, target = "http", f.URL
	}
	r := f.NewResult("client", transport, target, impl+"-client")
	r.RSSOf = "client"
	plan, err := f.Plan()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	start := time.Now()
	c, err := connect(&f, plan.MaxConc())
	if err != nil {
		r.Fatal = "connect: " + err.Error()
		r.Errors = 1
		r.Write(f.Out)
		return 1
	}
	r.ConnectMs = round(float64(time.Since(start).Microseconds())/1000, 2)
	r.Protocol = c.Protocol
	pid := f.ServerPID
	if pid == 0 {
		pid = c.ServerPID
	}
	if pid == 0 && transport == "stdio" {
		if kids := Children(os.Getpid()); len(kids) == 1 {
			pid = kids[0]
		}
	}
	plan.Server = Tree(pid)
	r.Phases = Run(c, plan)
	r.PeakRSSKB = PeakRSS([]int{os.Getpid()})
	c.Close()
	r.Finish()
	if err := r.Write(f.Out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if r.Fatal != "" {
		return 1
	}
	return 0
}

// CheckEcho compares the text an SDK returned with the message sent.
func CheckEcho(got string, want []byte) error {
	if got != string(want) {
		return fmt.Errorf("%w: got %d bytes, want %d", wire.ErrMismatch, len(got), len(want))
	}
	return nil
}
