package skills_test

import (
	"context"
	"fmt"
	"testing"
	"testing/fstest"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/skills"
)

// BenchmarkOtherCalls measures what serving skills costs the server's
// other calls: a tool call and a resource read, with no skills and with
// 200 skills (600 files) served.
func BenchmarkOtherCalls(b *testing.B) {
	for _, n := range []int{0, 200} {
		s := server.New(protocol.Implementation{Name: "bench", Version: "1"}, nil)
		server.AddTool(s, &protocol.Tool{Name: "echo"}, func(ctx context.Context, req *server.Request, in struct {
			S string `json:"s"`
		}) (string, error) {
			return in.S, nil
		})
		s.AddResource(&protocol.Resource{URI: "test://r", Name: "r"}, func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "r"}}}, nil
		})
		if n > 0 {
			fsys := fstest.MapFS{}
			for i := range n {
				name := fmt.Sprintf("skill-%d", i)
				fsys["team/"+name+"/SKILL.md"] = md(name, "A skill")
				fsys["team/"+name+"/references/a.md"] = &fstest.MapFile{Data: []byte("a")}
				fsys["team/"+name+"/scripts/b.py"] = &fstest.MapFile{Data: []byte("b")}
			}
			if err := skills.Serve(s, nil).AddFS(fsys); err != nil {
				b.Fatal(err)
			}
		}
		for _, v := range eras {
			c := dial(b, s, v)
			ctx := context.Background()
			b.Run(fmt.Sprintf("skills=%d/%s/tools-call", n, v), func(b *testing.B) {
				for b.Loop() {
					if _, err := c.Call(ctx, "echo", map[string]string{"s": "x"}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("skills=%d/%s/resources-read", n, v), func(b *testing.B) {
				for b.Loop() {
					if _, err := c.ReadResource(ctx, "test://r"); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
