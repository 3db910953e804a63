// Command server is the echo server on github.com/modelcontextprotocol/go-sdk,
// written as its documentation shows: a typed tool (mcp.AddTool), the
// StdioTransport, and the StreamableHTTPHandler. In the 2026-07-28 era the
// HTTP handler is stateless (-stateless), as the SDK requires for that
// revision; otherwise the SDK's defaults are kept (SSE answers).
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk-echo", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo back the message."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil, nil
		})
	return s
}

func main() {
	transport := flag.String("transport", "stdio", "stdio or http")
	port := flag.Int("port", 8080, "HTTP port (127.0.0.1 only)")
	stateless := flag.Bool("stateless", false, "a stateless HTTP handler (needed for 2026-07-28)")
	flag.Parse()
	s := newServer()
	switch *transport {
	case "stdio":
		if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
	case "http":
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(*port))
		if err != nil {
			log.Fatal(err)
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{Stateless: *stateless})
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		log.Fatal(http.Serve(ln, mux))
	default:
		log.Fatal("-transport must be stdio or http")
	}
}
