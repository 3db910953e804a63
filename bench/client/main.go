// Command client is ferry's client in the benchmark (bench/loadgen's
// harness runs it): it connects with ferry's client library (launching the
// server over stdio, or reaching it over Streamable HTTP) and calls echo.
// All workers share one client, as an application would. In the legacy
// era the client is pinned to 2025-11-25 (initialize); in 2026-07-28 it
// detects the era, its default.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
	"github.com/ferrymcp/ferry/transport/streamable"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
	"github.com/ferrymcp/ferry/bench/loadgen/wire"
)

type echoArgs struct {
	Message string `json:"message"`
}

// profiled runs the benchmark; built with -tags ferryprof it is profiled
// (profile.go).
var profiled = func(run func() int) int { return run() }

func main() {
	os.Exit(profiled(run))
}

func run() int {
	return harness.ClientMain("ferry", func(f *harness.Flags, _ int) (*harness.ClientConn, error) {
		ctx := context.Background()
		var t client.Transport
		var cmdStream *stdio.ClientStream
		if f.Stdio != "" {
			s, err := (&stdio.Command{Path: "sh", Args: []string{"-c", "exec " + f.Stdio}, Stderr: os.Stderr}).Connect(ctx)
			if err != nil {
				return nil, err
			}
			cmdStream = s
			t = client.StreamTransport{Stream: s}
		} else {
			t = &streamable.Transport{URL: f.URL}
		}
		// The harness's per-call timeout is ferry's MaxRequestTimeout,
		// which costs no context and no new timer per call.
		opts := &client.Options{
			Info:              protocol.Implementation{Name: "bench-ferry-client", Version: "0"},
			MaxRequestTimeout: f.CallTimeout,
		}
		if f.Era == "legacy" {
			opts.ProtocolVersion = protocol.LatestLegacyVersion
		}
		c, err := client.Connect(ctx, t, opts)
		if err != nil {
			return nil, err
		}
		if stateless := protocol.IsStateless(c.ProtocolVersion()); stateless != (f.Era != "legacy") {
			c.Close()
			return nil, fmt.Errorf("asked for the %s era, negotiated %s", f.Era, c.ProtocolVersion())
		}
		conn := &harness.ClientConn{Close: func() { c.Close() }, Protocol: c.ProtocolVersion()}
		if cmdStream != nil {
			conn.ServerPID = cmdStream.Pid()
		}
		conn.Caller = harness.CallerFunc(func(_ int, msg []byte) error {
			// The harness hands each call its message as bytes that stay
			// as they are until the call returns, and an application calls
			// with the string it has: a string(msg) here would add a
			// 64 KiB copy and 64 KiB of garbage per call that neither the
			// library nor such a caller makes (the raw client writes the
			// bytes as they are; the TS client's message is a rope of the
			// harness's pieces). ferry reads its arguments only until the
			// request is written, which is before its answer comes; a call
			// that times out first fails the run anyway.
			// The echo is checked and dropped, so the result is only
			// lent: its memory serves the next answer.
			var release func()
			r, err := c.Call(ctx, "echo", &echoArgs{Message: unsafe.String(unsafe.SliceData(msg), len(msg))}, client.Lend(&release))
			if err == nil {
				err = checkResult(r, msg)
			}
			release()
			if errors.Is(err, jsonrpc.ErrClosed) {
				return fmt.Errorf("%w: %v", wire.ErrFatal, err)
			}
			return err
		})
		return conn, nil
	})
}

// checkResult checks that r is the echo of msg.
func checkResult(r *protocol.CallToolResult, msg []byte) error {
	if r.IsError || len(r.Content) == 0 {
		return fmt.Errorf("bad tool result (isError=%v, %d content items)", r.IsError, len(r.Content))
	}
	if r.Content[0].Type != protocol.ContentText {
		return fmt.Errorf("content[0] is %s, want text", r.Content[0].Type)
	}
	return harness.CheckEcho(r.Content[0].Text, msg)
}
