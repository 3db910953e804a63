package host_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/ferrymcp/ferry/config"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// serveHTTP starts an MCP server with one tool on a loopback HTTP
// address and returns its URL and a function that stops it.
func serveHTTP(name, tool, answer string) (string, func()) {
	s := server.New(protocol.Implementation{Name: name, Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: tool}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return answer, nil
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	return ts.URL, func() { ts.Close(); h.Close() }
}

// A host runs the servers of a configuration file, the one MCP clients
// such as Claude Desktop or VS Code read, and presents their tools as
// one list: each tool named after its server, so that two servers may
// both have a tool called "search". Stdio entries are launched as
// subprocesses; these two are HTTP servers of this process.
func ExampleNew() {
	docsURL, stopDocs := serveHTTP("docs", "search", "3 pages")
	defer stopDocs()
	mailURL, stopMail := serveHTTP("mail", "search", "2 messages")
	defer stopMail()

	file, err := config.Parse("mcp.json", fmt.Appendf(nil, `{"mcpServers": {
		"docs": {"type": "http", "url": %q},
		"mail": {"type": "http", "url": %q}
	}}`, docsURL, mailURL), nil)
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.New(file.Servers, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()

	ctx := context.Background()
	if err := h.Start(ctx); err != nil { // all of them, concurrently
		log.Fatal(err)
	}
	tools, err := h.Tools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name, "from", t.Server)
	}
	res, err := h.Call(ctx, "mail__search", map[string]string{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// docs__search from docs
	// mail__search from mail
	// 2 messages
}
