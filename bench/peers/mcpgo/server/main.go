// Command server is the echo server on github.com/mark3labs/mcp-go, written
// as its documentation shows: a typed tool handler (NewTypedToolHandler),
// ServeStdio, and the StreamableHTTPServer (as an http.Handler, to bind
// 127.0.0.1). The SDK serves both eras from the same server by itself.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"strconv"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type echoArgs struct {
	Message string `json:"message"`
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("mcpgo-echo", "0.1.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo back the message."),
		mcp.WithString("message", mcp.Required(), mcp.Description("the text to echo back"))),
		mcp.NewTypedToolHandler(func(ctx context.Context, req mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(in.Message), nil
		}))
	return s
}

func main() {
	transport := flag.String("transport", "stdio", "stdio or http")
	port := flag.Int("port", 8080, "HTTP port (127.0.0.1 only)")
	flag.Parse()
	s := newServer()
	switch *transport {
	case "stdio":
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
		if err != nil {
			log.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/mcp", server.NewStreamableHTTPServer(s))
		log.Fatal(http.Serve(ln, mux))
	default:
		log.Fatal("-transport must be stdio or http")
	}
}
