// Command client is the benchmark's client on go-sdk: one ClientSession
// shared by all workers, as an application would, over the
// CommandTransport or the StreamableClientTransport. In the legacy era the
// session asks for 2025-11-25 (initialize); in 2026-07-28 it uses the
// SDK's default, which discovers the server and goes stateless.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	os.Exit(harness.ClientMain("gosdk", connect))
}

func connect(f *harness.Flags, _ int) (*harness.ClientConn, error) {
	ctx := context.Background()
	var t mcp.Transport
	var cmd *exec.Cmd
	if f.Stdio != "" {
		cmd = exec.Command("sh", "-c", "exec "+f.Stdio)
		cmd.Stderr = os.Stderr
		t = &mcp.CommandTransport{Command: cmd}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: f.URL}
	}
	opts := &mcp.ClientSessionOptions{}
	if f.Era == "legacy" {
		opts.ProtocolVersion = "2025-11-25"
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-gosdk-client", Version: "0"}, nil)
	cs, err := c.Connect(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	proto := cs.InitializeResult().ProtocolVersion
	if (f.Era == "legacy") != (proto < "2026-07-28") {
		cs.Close()
		return nil, fmt.Errorf("asked for the %s era, negotiated %s", f.Era, proto)
	}
	conn := &harness.ClientConn{Close: func() { cs.Close() }, Protocol: proto}
	if cmd != nil {
		conn.ServerPID = cmd.Process.Pid
	}
	conn.Caller = harness.CallerFunc(func(_ int, msg []byte) error {
		cctx, cancel := context.WithTimeout(ctx, f.CallTimeout)
		defer cancel()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": string(msg)}})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("bad tool result (isError=%v, %d content items)", res.IsError, len(res.Content))
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			return fmt.Errorf("content[0] is %T, want text", res.Content[0])
		}
		return harness.CheckEcho(text.Text, msg)
	})
	return conn, nil
}
