package client_test

import (
	"context"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A tool that keeps nothing of its arguments, and a caller that keeps
// nothing of the result but a copy: over Streamable HTTP, both sides then
// read each message into the memory of one they are done with.
func ExampleLend() {
	s := server.New(protocol.Implementation{Name: "echo", Version: "1"}, &server.Options{LendToolArguments: true})
	server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
		Message string `json:"message"`
	}) (string, error) {
		return in.Message, nil // the result is sent before the memory is reused
	})
	h := streamablehandler.New(s, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var release func()
	res, err := c.Call(ctx, "echo", map[string]string{"message": "hello"}, client.Lend(&release))
	if err != nil {
		log.Fatal(err)
	}
	kept := strings.Clone(res.Content[0].Text) // what outlives release is copied
	release()                                  // res is not used after it
	fmt.Println(kept)
	// Output: hello
}
