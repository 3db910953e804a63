package streamablehandler_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/streamable"
	"github.com/ferrymcp/ferry/transport/streamablehandler"
)

// A server on HTTP: the Handler is an http.Handler, mounted where the
// program likes (here /mcp of a loopback test server; in a program,
// http.ListenAndServe). One endpoint serves clients of both eras: a
// legacy client opens a session with initialize, a stateless one sends
// self-contained requests. The client side is a Transport with the URL.
func ExampleNew() {
	s := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "greet"},
		func(ctx context.Context, req *server.Request, in struct {
			Name string `json:"name"`
		}) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	h := streamablehandler.New(s, nil)
	defer h.Close() // ends the sessions
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()

	ctx := context.Background()
	for _, version := range []string{"", protocol.Version20250326} { // detected, pinned
		c, err := client.Connect(ctx, &streamable.Transport{URL: ts.URL + "/mcp"}, &client.Options{ProtocolVersion: version})
		if err != nil {
			log.Fatal(err)
		}
		res, err := c.Call(ctx, "greet", map[string]string{"name": "Ada"})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.ProtocolVersion(), res.Content[0].Text)
		c.Close()
	}
	// Output:
	// 2026-07-28 Hello, Ada!
	// 2025-03-26 Hello, Ada!
}
