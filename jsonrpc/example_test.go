package jsonrpc_test

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

// A wrapper made with Observe sees every message that crosses a stream
// (here a client's, for a trace) and keeps every capability of the
// stream under it: As finds them through it, so a traced connection takes
// the same paths as one that is not traced.
func ExampleObserve() {
	s := server.New(protocol.Implementation{Name: "clock", Version: "1"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "now"}, func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
		return "12:00", nil
	})
	serverEnd, clientEnd := memory.NewPipe(jsonrpc.Limits{})
	go s.Run(context.Background(), serverEnd)

	traced := jsonrpc.Observe(clientEnd, jsonrpc.Observer{
		Message: func(m *jsonrpc.Message, sent bool) {
			switch {
			case sent && m.Method != "":
				fmt.Println("->", m.Method)
			case !sent:
				fmt.Println("<- answer to", m.ID)
			}
		},
	})
	_, interruptible := jsonrpc.As[jsonrpc.ReadInterrupter](traced)
	fmt.Println("read interrupter found through the wrapper:", interruptible)

	ctx := context.Background()
	c, err := client.Connect(ctx, client.StreamTransport{Stream: traced}, &client.Options{ProtocolVersion: protocol.Version20260728})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(ctx, "now", nil); err != nil {
		log.Fatal(err)
	}
	// Output:
	// read interrupter found through the wrapper: true
	// -> server/discover
	// <- answer to 1
	// -> tools/call
	// <- answer to 2
}
