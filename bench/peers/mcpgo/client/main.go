// Command client is the benchmark's client on mcp-go: one Client shared
// by all workers, over its stdio or Streamable HTTP transport. In the
// legacy era it is pinned to 2025-11-25 (WithProtocolVersion keeps it on
// initialize); in 2026-07-28 Initialize discovers the server and goes
// stateless, the SDK's default.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"

	"github.com/ferrymcp/ferry/bench/loadgen/harness"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	os.Exit(harness.ClientMain("mcpgo", connect))
}

func connect(f *harness.Flags, _ int) (*harness.ClientConn, error) {
	ctx := context.Background()
	var t transport.Interface
	var cmd *exec.Cmd
	if f.Stdio != "" {
		st := transport.NewStdioWithOptions("sh", nil, []string{"-c", "exec " + f.Stdio},
			transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
				cmd = exec.CommandContext(ctx, command, args...)
				return cmd, nil
			}))
		t = st
	} else {
		h, err := transport.NewStreamableHTTP(f.URL)
		if err != nil {
			return nil, err
		}
		t = h
	}
	var opts []client.ClientOption
	if f.Era == "legacy" {
		opts = append(opts, client.WithProtocolVersion("2025-11-25"))
	}
	c := client.NewClient(t, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "bench-mcpgo-client", Version: "0"},
	}}); err != nil {
		c.Close()
		return nil, err
	}
	proto := c.ProtocolVersion()
	if (f.Era == "legacy") != (proto < "2026-07-28") {
		c.Close()
		return nil, fmt.Errorf("asked for the %s era, negotiated %s", f.Era, proto)
	}
	conn := &harness.ClientConn{Close: func() { c.Close() }, Protocol: proto}
	if cmd != nil && cmd.Process != nil {
		conn.ServerPID = cmd.Process.Pid
	}
	conn.Caller = harness.CallerFunc(func(_ int, msg []byte) error {
		cctx, cancel := context.WithTimeout(ctx, f.CallTimeout)
		defer cancel()
		res, err := c.CallTool(cctx, mcp.CallToolRequest{Params: mcp.CallToolParams{
			Name: "echo", Arguments: map[string]any{"message": string(msg)}}})
		if err != nil {
			return err
		}
		if res.IsError || len(res.Content) == 0 {
			return fmt.Errorf("bad tool result (isError=%v, %d content items)", res.IsError, len(res.Content))
		}
		text, ok := res.Content[0].(mcp.TextContent)
		if !ok {
			return fmt.Errorf("content[0] is %T, want text", res.Content[0])
		}
		return harness.CheckEcho(text.Text, msg)
	})
	return conn, nil
}
