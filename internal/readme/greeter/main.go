// Command greeter is the server of the README's "A server in a few
// lines": the README shows the part of main between the readme markers,
// and the test of package readme checks that the two are the same and
// runs this program.
package main

import (
	"context"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

func main() {
	ctx := context.Background()
	// readme:begin
	type greetIn struct {
		Name string `json:"name" description:"Who to greet"`
	}

	s := server.New(protocol.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, req *server.Request, in greetIn) (string, error) {
			return "Hello, " + in.Name + "!", nil
		})
	s.Run(ctx, stdio.ServerStream())
	// readme:end
}
