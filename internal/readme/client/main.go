// Command client is the client of the README's "A client in a few
// lines": the README shows the part of main between the readme markers,
// and the test of package readme checks that the two are the same and
// builds this program.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/transport/stdio"
)

func main() {
	ctx := context.Background()
	// readme:begin
	server := &stdio.Command{Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}}
	c, err := client.Connect(ctx, server, nil) // a Command is a client.Transport
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name)
	}
	res, err := c.Call(ctx, "echo", map[string]any{"message": "hi"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// readme:end
}
