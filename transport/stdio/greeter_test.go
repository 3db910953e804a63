package stdio

import (
	"context"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// serveGreeter is the MCP server ExampleCommand launches: the test binary
// run with FERRY_STDIO_TEST_HELPER=greeter.
func serveGreeter() int {
	s := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "greet"},
		func(ctx context.Context, req *server.Request, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	if err := s.Run(context.Background(), ServerStream()); err != nil {
		return 1
	}
	return 0
}
