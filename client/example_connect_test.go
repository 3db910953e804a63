package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// Connect and call. Connect finds out which protocol era the server
// speaks (or pins one with Options.ProtocolVersion); the methods are the
// same in both. A tool that fails returns a result with IsError set, for
// the model to read; a request the server refuses returns an error.
func ExampleConnect() {
	s := server.New(protocol.Implementation{Name: "files", Version: "2.1.0"}, &server.Options{
		Instructions: "Use list to see the files.",
	})
	server.AddTool(s, &protocol.Tool{Name: "list", Description: "Lists the files"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "a.txt b.txt", nil
		})
	server.AddTool(s, &protocol.Tool{Name: "delete"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "", errors.New("the files are read-only")
		})
	a, b := memory.NewPipe(jsonrpc.Limits{})
	go s.Run(context.Background(), a)

	ctx := context.Background()
	c, err := client.Connect(ctx, client.StreamTransport{Stream: b}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.ServerInfo().Name, c.ServerInfo().Version, c.ProtocolVersion())
	fmt.Println(c.Instructions())

	tools, err := client.Collect(c.Tools(ctx)) // every page
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Printf("%s: %q\n", t.Name, t.Description)
	}
	res, err := c.Call(ctx, "list", nil)
	fmt.Println(res.Content[0].Text, err)
	res, err = c.Call(ctx, "delete", nil)
	fmt.Println(res.IsError, res.Content[0].Text, err)
	_, err = c.Call(ctx, "rename", nil)
	fmt.Println(err)
	// Output:
	// files 2.1.0 2026-07-28
	// Use list to see the files.
	// delete: ""
	// list: "Lists the files"
	// a.txt b.txt <nil>
	// true the files are read-only <nil>
	// jsonrpc error -32602: unknown tool "rename"
}
