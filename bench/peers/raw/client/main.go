// Command client is the ceiling among the clients: the load generator's
// own wire client (bench/loadgen/wire), no MCP library, as a client
// program driving the peer server like the SDK clients do.
package main

import (
	"os"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

func main() {
	os.Exit(harness.ClientMain("raw", func(f *harness.Flags, conc int) (*harness.ClientConn, error) {
		era, err := wire.ParseEra(f.Era)
		if err != nil {
			return nil, err
		}
		if f.Stdio != "" {
			s, err := wire.SpawnStdio(f.Stdio, era, conc, f.CallTimeout)
			if err != nil {
				return nil, err
			}
			return &harness.ClientConn{Caller: s, Close: func() { s.Close() }, Protocol: s.Protocol(), ServerPID: s.Pid()}, nil
		}
		h, err := wire.DialHTTP(f.URL, era, conc, f.CallTimeout)
		if err != nil {
			return nil, err
		}
		return &harness.ClientConn{Caller: h, Close: func() { h.Close() }, Protocol: h.Protocol()}, nil
	}))
}
