package httpserver_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/transport/httpserver"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A program that serves an MCP endpoint with an http.Server of its own
// sets the bounds the server alone can set, and caps its connections.
// (httpserver.Serve does all of this.)
func Example_ownServer() {
	h := streamablehandler.New(mcpServer(), nil)
	defer h.Close()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second, // a client that never finishes its headers
		ReadTimeout:       time.Minute,      // ... or its body (lifted once it was read)
		// A deadline for each answer; ferry's handler moves it forward at
		// each write of an event stream, which can then last for hours.
		WriteTimeout:   time.Minute,
		IdleTimeout:    time.Minute, // kept-alive connections with no request
		MaxHeaderBytes: 64 << 10,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	// At most 1,024 connections at once, half of them from one address.
	go srv.Serve(httpserver.NewListener(ln, &httpserver.Options{MaxConns: 1024}))
	defer srv.Close()

	ctx := context.Background()
	c, err := client.Connect(ctx, &streamable.Transport{URL: "http://" + ln.Addr().String() + "/mcp"}, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "echo", map[string]any{"message": "bounded"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output: bounded
}
