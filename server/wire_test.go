package server_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/stdio"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// wireServer is the server the golden tests talk to: a little of
// everything, with deterministic answers.
func wireServer() *server.Server {
	s := server.New(protocol.Implementation{Name: "golden", Title: "Golden", Version: "1.0.0"}, &server.Options{
		Instructions:    "Test server.",
		RequestStateKey: []byte("fixed key for golden tests"),
	})
	type echoIn struct {
		Message string `json:"message" description:"Text to echo"`
	}
	server.AddTool(s, &protocol.Tool{Name: "echo", Description: "Echoes"},
		func(ctx context.Context, req *server.Request, in echoIn) (string, error) { return in.Message, nil })
	type sumOut struct {
		Sum int `json:"sum"`
	}
	server.AddTool(s, &protocol.Tool{Name: "sum", Title: "Sum", Description: "Adds"},
		func(ctx context.Context, req *server.Request, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (sumOut, error) {
			return sumOut{in.A + in.B}, nil
		})
	server.AddTool(s, &protocol.Tool{Name: "ask", Description: "Asks the user"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			res, err := req.Elicit(ctx, &protocol.ElicitParams{Message: "Name?", RequestedSchema: []byte(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s %v", res.Action, res.Content["name"]), nil
		})
	server.AddTool(s, &protocol.Tool{Name: "fail", Description: "Fails"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			return "", fmt.Errorf("it failed")
		})
	s.AddResource(&protocol.Resource{URI: "test://a", Name: "a", MIMEType: "text/plain"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "A"}}}, nil
		})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: uri, Text: "item " + req.URIVars["id"]}}}, nil
		})
	s.AddPrompt(&protocol.Prompt{Name: "greet", Arguments: []protocol.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
			return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("Hello " + args["who"])}}}, nil
		})
	s.SetCompleter(protocol.RefPrompt, "greet", func(ctx context.Context, req *server.Request, arg, value string, _ map[string]string) ([]string, error) {
		return []string{value + "1", value + "2"}, nil
	})
	return s
}

// exchange is one line sent and the number of lines expected back.
type exchange struct {
	send    string
	answers int
}

const statelessMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

var wireScripts = map[string][]exchange{
	"legacy": {
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, 1},
		{`{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, 1},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sum","arguments":{"a":1,"b":2}}}`, 1},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":7}}}`, 1},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"fail"}}`, 1},
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope"}}`, 1},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask"}}`, 1}, // elicitation/create to the client
		{`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Ann"}}}`, 1},
		{`{"jsonrpc":"2.0","id":9,"method":"resources/list"}`, 1},
		{`{"jsonrpc":"2.0","id":10,"method":"resources/templates/list"}`, 1},
		{`{"jsonrpc":"2.0","id":11,"method":"resources/read","params":{"uri":"test://items/42"}}`, 1},
		{`{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"test://missing"}}`, 1},
		{`{"jsonrpc":"2.0","id":13,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"Bo"}}}`, 1},
		{`{"jsonrpc":"2.0","id":14,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"x"}}}`, 1},
		{`{"jsonrpc":"2.0","id":15,"method":"logging/setLevel","params":{"level":"warning"}}`, 1},
		{`{"jsonrpc":"2.0","id":16,"method":"ping"}`, 1},
		{`{"jsonrpc":"2.0","id":17,"method":"nosuch/method"}`, 1},
		{`{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{"a":1,"a":2}}`, 1},
		{`not json`, 1},
	},
	"stateless": {
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + statelessMeta + `}}`, 1},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + statelessMeta + `}}`, 1},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{` + statelessMeta + `,"name":"echo","arguments":{"message":"hi"}}}`, 1},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{` + statelessMeta + `,"name":"ask"}}`, 1},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"ask"}}`, 1},
		{`{"jsonrpc":"2.0","id":6,"method":"resources/read","params":{` + statelessMeta + `,"uri":"test://a"}}`, 1},
		{`{"jsonrpc":"2.0","id":7,"method":"resources/read","params":{` + statelessMeta + `,"uri":"test://missing"}}`, 1},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, 1},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, 1},
		{`{"jsonrpc":"2.0","id":10,"method":"ping","params":{` + statelessMeta + `}}`, 1},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, 1},
		{`{"jsonrpc":"2.0","id":12,"method":"prompts/list","params":{` + statelessMeta + `}}`, 1},
	},
}

// stateRE hides the parts of a requestState that change with time.
var stateRE = regexp.MustCompile(`"requestState":"[^"]*"`)

// TestGoldenWire drives the server over the real stdio framing with a
// script of raw messages and compares every line it writes with a golden
// file, one per era.
func TestGoldenWire(t *testing.T) {
	for name, script := range wireScripts {
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			got := runScript(t, wireServer(), script)
			got = stateRE.ReplaceAllString(got, `"requestState":"<sealed>"`)
			path := filepath.Join("testdata", "wire-"+name+".golden")
			if *update {
				os.MkdirAll("testdata", 0o755)
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("wire mismatch for %s (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}

func runScript(t *testing.T, s *server.Server, script []exchange) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- s.Run(ctx, stdio.NewServerStream(inR, outW, jsonrpc.Limits{}))
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	var b strings.Builder
	for _, ex := range script {
		fmt.Fprintf(&b, "> %s\n", ex.send)
		if _, err := io.WriteString(inW, ex.send+"\n"); err != nil {
			t.Fatal(err)
		}
		for range ex.answers {
			got := make(chan bool, 1)
			go func() { got <- lines.Scan() }()
			select {
			case ok := <-got:
				if !ok {
					t.Fatalf("server closed its output; err %v", lines.Err())
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no answer to %s", ex.send)
			}
			fmt.Fprintf(&b, "< %s\n", lines.Text())
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop after stdin EOF")
	}
	cancel()
	for lines.Scan() {
		fmt.Fprintf(&b, "< (after EOF) %s\n", lines.Text())
	}
	return b.String()
}
