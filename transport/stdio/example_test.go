package stdio_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// A client launches a server as a subprocess and talks to it over its
// stdin and stdout. A Command is a client.Transport: hand it to
// client.Connect as it is. Here the server is this test binary, switched
// into an MCP server by an environment variable; in a program it is
// something like Path: "npx", Args: []string{"-y", "some-mcp-server"}.
func ExampleCommand() {
	cmd := &stdio.Command{
		Path: os.Args[0],
		Env:  map[string]string{"FERRY_STDIO_TEST_HELPER": "greeter"},
	}
	ctx := context.Background()
	c, err := client.Connect(ctx, cmd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // closes the server's stdin, then waits for it to exit
	res, err := c.Call(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ServerInfo().Name, c.ProtocolVersion())
	fmt.Println(res.Content[0].Text)
	// Output:
	// greeter 2026-07-28
	// Hello, Ada!
}

// A server on stdio reads one JSON-RPC message per line and answers one
// per line. A program serves with s.Run(ctx, stdio.ServerStream()), on
// its own stdin and stdout; NewServerStream takes any reader and writer,
// here two requests of the stateless protocol and this program's output.
func ExampleNewServerStream() {
	s := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "greet"},
		func(ctx context.Context, req *server.Request, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})

	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background(), stdio.NewServerStream(stdinR, stdoutW, jsonrpc.Limits{})) }()

	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	answers := bufio.NewScanner(stdoutR)
	for id, args := range []string{`{"name":"Ada"}`, `{}`} {
		fmt.Fprintf(stdinW, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"greet","arguments":%s,%s}}`+"\n", id+1, args, meta)
		answers.Scan()
		fmt.Println(answers.Text())
	}
	stdinW.Close() // the client is gone: Run returns
	<-done
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}]}}
	// {"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"invalid arguments for tool \"greet\": missing required argument \"name\""}],"isError":true}}
}
