package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// Client middleware sees every request the client sends, the handshake's
// included: here, one that logs each method and whether it failed.
func Example_middleware() {
	s := server.New(protocol.Implementation{Name: "clock", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "now"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC).Format(time.Kitchen), nil
	})
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	defer conn.Close()

	logRequests := func(next intercept.Handler) intercept.Handler {
		return func(ctx context.Context, req *intercept.Request) (intercept.Result, error) {
			res, err := next(ctx, req)
			if name := req.Name(); name != "" {
				fmt.Printf("%s %s: error %v, tool error %v\n", req.Method, name, err, res.IsError)
			} else {
				fmt.Printf("%s: error %v\n", req.Method, err)
			}
			return res, err
		}
	}
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, &client.Options{
		ProtocolVersion: protocol.Version20251125,
		Sending:         []intercept.Middleware{logRequests},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(context.Background(), "now", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// initialize: error <nil>
	// tools/call now: error <nil>, tool error false
	// 12:00PM
}
