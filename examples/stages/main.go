// Command stages runs the main job of an MCP host against one server and
// shows each stage with the time it took: spawn the server over stdio,
// negotiate the protocol (era detection), list its tools, call one, shut
// down.
//
//	go run ./examples/stages                      # ferry's example server
//	go run ./examples/stages -- npx -y @modelcontextprotocol/server-everything
//	go run ./examples/stages -tool add -args '{"a":1,"b":2}' -- go run ./examples/everything
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

func main() {
	tool := flag.String("tool", "echo", "tool to call")
	args := flag.String("args", `{"message":"hello from ferry"}`, "arguments of the call, as a JSON object")
	version := flag.String("protocol", "", "pin a protocol revision (default: detect)")
	timeout := flag.Duration("timeout", 2*time.Minute, "bound on the whole run")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: stages [flags] [-- command args...]\n\nWithout a command, runs ferry's example server (go run ./examples/everything).\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	argv := flag.Args()
	if len(argv) == 0 {
		argv = []string{"go", "run", "./examples/everything"}
	}
	if err := run(argv, *tool, *args, *version, *timeout); err != nil {
		fmt.Fprintf(os.Stderr, "stages: %v\n", err)
		os.Exit(1)
	}
}

func stage(name string, start time.Time, format string, a ...any) {
	fmt.Printf("%-10s %9.1f ms  %s\n", name, float64(time.Since(start).Microseconds())/1000, fmt.Sprintf(format, a...))
}

func run(argv []string, tool, rawArgs, version string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	total := time.Now()

	t := time.Now()
	cmd := &stdio.Command{Path: argv[0], Args: argv[1:]}
	stream, err := cmd.Connect(ctx)
	if err != nil {
		return fmt.Errorf("spawn: %w", err)
	}
	stage("spawn", t, "%s (pid %d)", strings.Join(argv, " "), stream.Pid())

	t = time.Now()
	c, err := client.Connect(ctx, client.StreamTransport{Stream: stream}, &client.Options{
		Info:            protocol.Implementation{Name: "ferry-stages", Version: "0.1.0"},
		ProtocolVersion: version,
	})
	if err != nil {
		stream.Close()
		return fmt.Errorf("negotiate: %w (stderr: %s)", err, strings.TrimSpace(stream.Stderr()))
	}
	era := "legacy (initialize)"
	if c.Stateless() {
		era = "stateless (server/discover)"
	}
	info := c.ServerInfo()
	stage("negotiate", t, "%s %s, server %s %s", era, c.ProtocolVersion(), info.Name, info.Version)

	t = time.Now()
	tools, err := client.Collect(c.Tools(ctx))
	if err != nil {
		c.Close()
		return fmt.Errorf("list tools: %w", err)
	}
	names := make([]string, len(tools))
	for i, tl := range tools {
		names[i] = tl.Name
	}
	stage("list", t, "%d tools: %s", len(tools), strings.Join(names, ", "))

	t = time.Now()
	res, err := c.CallTool(ctx, &protocol.CallToolParams{Name: tool, Arguments: []byte(rawArgs)})
	if err != nil {
		c.Close()
		return fmt.Errorf("call %s: %w", tool, err)
	}
	stage("call", t, "%s %s -> %s", tool, rawArgs, summarize(res))

	t = time.Now()
	c.Close()
	status := "exited"
	if err := stream.ExitErr(); err != nil {
		status = err.Error()
	}
	stage("shutdown", t, "server %s", status)
	stage("total", total, "")
	return nil
}

func summarize(res *protocol.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c.Type {
		case protocol.ContentText:
			parts = append(parts, fmt.Sprintf("%q", c.Text))
		default:
			parts = append(parts, "["+c.Type+"]")
		}
	}
	if len(res.StructuredContent) > 0 {
		var v any
		json.Unmarshal(res.StructuredContent, &v)
		b, _ := json.Marshal(v)
		parts = append(parts, "structured "+string(b))
	}
	s := strings.Join(parts, " ")
	if res.IsError {
		s = "tool error: " + s
	}
	return s
}
