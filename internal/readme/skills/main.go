// Command skills is the example of the README's "Skills (SEP-2640)": a
// server publishes the skills of an embedded folder, and a client lists
// them, loads one and reads a file of it, each verified against the
// skill's manifest. The README shows the part of main between the
// readme markers; the test of package readme checks that the two are the
// same and runs this program.
package main

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
	"github.com/ferrymcp/ferry/transport/memory"
)

//go:embed skills
var embedded embed.FS

func main() {
	ctx := context.Background()
	srv := server.New(protocol.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	a, b := memory.NewPipe(jsonrpc.Limits{})
	defer srv.Connect(ctx, a).Close()
	connect := func() (*client.Client, error) {
		return client.Connect(ctx, client.StreamTransport{Stream: b}, nil)
	}
	// readme:begin
	// The server: each folder with a SKILL.md is a skill at its path.
	folder, _ := fs.Sub(embedded, "skills") // an embed.FS, or os.DirFS
	if err := skills.Serve(srv, nil).AddFS(folder); err != nil {
		log.Fatal(err) // an invalid skill: the error names its file
	}

	// The client: the listing is the registry; nothing is read before a
	// skill is loaded, and everything read is verified.
	c, err := connect()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	sc := skills.NewClient(c)
	for s, err := range sc.Skills(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", s.Name(), s.Description())
		loaded, err := sc.Load(ctx, &s) // reads SKILL.md (*skills.VerifyError)
		if err != nil {
			log.Fatal(err)
		}
		style, err := loaded.ReadFile(ctx, "references/STYLE.md")
		if err != nil {
			log.Fatal(err) // a digest or size that does not match
		}
		fmt.Printf("%s", style)
	}
	// readme:end
}
