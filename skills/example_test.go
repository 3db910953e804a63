package skills_test

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

// The skills a program ships inside its binary: a folder per skill, as
// agents load them from disk.
//
//go:embed testdata/catalog
var embedded embed.FS

// connect serves s on one end of an in-memory pipe and returns a client
// on the other end.
func connect(s *server.Server) (*client.Client, func()) {
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); conn.Close() }
}

// Serving the skills of an embed.FS: each folder holding a SKILL.md is a
// skill at its path, every file a resource with a digest in the skill's
// manifest.
func ExampleServer_AddFS() {
	s := server.New(protocol.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	catalog, err := fs.Sub(embedded, "testdata/catalog")
	if err != nil {
		log.Fatal(err)
	}
	if err := skills.Serve(s, nil).AddFS(catalog); err != nil {
		log.Fatal(err) // an invalid skill: the error names its file
	}

	c, done := connect(s)
	defer done()
	fmt.Println(c.ServerCapabilities().Extensions[skills.Extension])
	var res skills.ListResult
	if err := c.CallMethod(context.Background(), skills.MethodList, nil, &res); err != nil {
		log.Fatal(err)
	}
	for _, sk := range res.Skills {
		fmt.Printf("%s (%s): %d files\n", sk.URI, sk.Name(), len(sk.Resources))
	}
	// Output:
	// map[directoryRead:true]
	// skill://acme/billing/refunds/SKILL.md (refunds): 2 files
	// skill://pdf-processing/SKILL.md (pdf-processing): 4 files
}

// Reading skills: the listing is the registry, and nothing is read
// before a skill is loaded. Loading reads SKILL.md and verifies it
// against the entry; each file read afterwards is verified against the
// manifest, and one the manifest does not list is refused.
func ExampleClient_Load() {
	s := server.New(protocol.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	if err := skills.Serve(s, nil).AddFS(dirFS("testdata/catalog")); err != nil {
		log.Fatal(err)
	}
	c, done := connect(s)
	defer done()

	ctx := context.Background()
	sc := skills.NewClient(c)
	for sk, err := range sc.Skills(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", sk.Name(), sk.Description())
	}
	entry, err := sc.Get(ctx, "skill://pdf-processing/SKILL.md")
	if err != nil {
		log.Fatal(err)
	}
	skill, err := sc.Load(ctx, entry) // a *skills.VerifyError if it does not match
	if err != nil {
		log.Fatal(err)
	}
	forms, err := skill.ReadFile(ctx, "references/FORMS.md")
	fmt.Printf("%q %v\n", forms, err)
	_, err = skill.ReadFile(ctx, "references/credit-note.md")
	fmt.Println(err)
	// Output:
	// refunds: Process customer refund requests per company policy
	// pdf-processing: Extract, fill, and assemble PDF documents
	// "Form fields: name, date, amount.\n" <nil>
	// skill verification failed: skill://pdf-processing/references/credit-note.md: file not in the manifest: not in the manifest of skill://pdf-processing/SKILL.md
}
