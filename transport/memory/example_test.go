package memory_test

import (
	"context"
	"fmt"
	"log"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// A server embedded in its client, or a test of a server without a
// process or a socket: the server serves one end of the pipe, the client
// talks over the other.
func ExampleNewPipe() {
	s := server.New(protocol.Implementation{Name: "clock", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "now"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "12:00", nil
	})

	serverEnd, clientEnd := memory.NewPipe(jsonrpc.Limits{})
	ctx := context.Background()
	go s.Run(ctx, serverEnd)
	c, err := client.Connect(ctx, client.StreamTransport{Stream: clientEnd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "now", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output: 12:00
}
