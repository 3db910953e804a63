package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
	"github.com/ferrymcp/ferry/transport/memory"
)

// connect serves s on one end of an in-memory pipe and returns a client
// on the other end. opts may be nil.
func connect(s *server.Server, opts *client.Options) (*client.Client, func()) {
	a, b := memory.NewPipe(jsonrpc.Limits{})
	conn := s.Connect(context.Background(), a)
	c, err := client.Connect(context.Background(), client.StreamTransport{Stream: b}, opts)
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); conn.Close() }
}

// A typed tool: the input schema is inferred from the Go type (json
// names, description tags, required unless omitempty), the arguments are
// validated against it and decoded before the handler runs, and a string
// result becomes a text content block.
func ExampleAddTool() {
	type addIn struct {
		A int `json:"a" description:"The first term"`
		B int `json:"b" description:"The second term"`
	}
	s := server.New(protocol.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "add", Description: "Adds two integers"},
		func(ctx context.Context, req *server.Request, in addIn) (string, error) {
			return fmt.Sprint(in.A + in.B), nil
		})

	c, done := connect(s, nil)
	defer done()
	ctx := context.Background()
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tool.Name, string(tool.InputSchema))
	}
	res, err := c.Call(ctx, "add", map[string]int{"a": 2, "b": 40})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	res, err = c.Call(ctx, "add", map[string]any{"a": "two"})
	fmt.Println(res.IsError, err == nil)
	// Output:
	// add {"type":"object","properties":{"a":{"description":"The first term","type":"integer"},"b":{"description":"The second term","type":"integer"}},"additionalProperties":false,"required":["a","b"]}
	// 42
	// true true
}

// A typed tool with a structured result: a struct output is sent as
// structuredContent, with its JSON as text for clients that read only
// text, and the tool advertises the output schema.
func ExampleTypedToolHandler() {
	type weatherIn struct {
		City string `json:"city"`
	}
	type weatherOut struct {
		City    string  `json:"city"`
		Celsius float64 `json:"celsius"`
	}
	s := server.New(protocol.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "weather"},
		func(ctx context.Context, req *server.Request, in weatherIn) (weatherOut, error) {
			return weatherOut{City: in.City, Celsius: 21.5}, nil
		})

	c, done := connect(s, nil)
	defer done()
	res, err := c.Call(context.Background(), "weather", map[string]string{"city": "Lyon"})
	if err != nil {
		log.Fatal(err)
	}
	var out weatherOut
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %.1f °C\n", out.City, out.Celsius)
	// Output: Lyon: 21.5 °C
}

// A handler asks the user through the client with Request.Elicit. The
// same handler serves both eras: a legacy session gets an
// elicitation/create request; a stateless client gets an input_required
// result and retries with the answer, and the handler runs again.
func ExampleRequest_Elicit() {
	s := server.New(protocol.Implementation{Name: "deploy", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "deploy"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			answer, err := req.Elicit(ctx, &protocol.ElicitParams{
				Message:         "Deploy to production?",
				RequestedSchema: []byte(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
			})
			if err != nil {
				return "", err // ErrInputRequired included: the question goes to the client
			}
			if answer.Action != "accept" || answer.Content["confirm"] != true {
				return "not deployed", nil
			}
			return "deployed", nil
		})

	for _, version := range []string{protocol.Version20251125, protocol.Version20260728} {
		c, done := connect(s, &client.Options{
			ProtocolVersion: version,
			Elicitation: func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				fmt.Println("asked:", p.Message)
				return &protocol.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			},
		})
		res, err := c.Call(context.Background(), "deploy", nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s (stateless %v)\n", res.Content[0].Text, c.Stateless())
		done()
	}
	// Output:
	// asked: Deploy to production?
	// deployed (stateless false)
	// asked: Deploy to production?
	// deployed (stateless true)
}

// A long-running tool reports progress; the caller sees it through
// client.WithProgress (or Options.OnProgress).
func ExampleRequest_Progress() {
	s := server.New(protocol.Implementation{Name: "indexer", Version: "1.0.0"}, nil)
	server.AddTool(s, &protocol.Tool{Name: "index"},
		func(ctx context.Context, req *server.Request, in struct{}) (string, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Progress(ctx, float64(i), 3, fmt.Sprintf("file %d of 3", i)); err != nil {
					return "", err
				}
			}
			return "indexed 3 files", nil
		})

	c, done := connect(s, nil)
	defer done()
	ctx := client.WithProgress(context.Background(), func(p *protocol.ProgressParams) {
		fmt.Printf("%.0f/%.0f %s\n", p.Progress, p.Total, p.Message)
	})
	res, err := c.Call(ctx, "index", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// 1/3 file 1 of 3
	// 2/3 file 2 of 3
	// 3/3 file 3 of 3
	// indexed 3 files
}

// Resources: a fixed resource and a template whose URI carries a
// parameter. The handler gets the URI the client asked for.
func ExampleServer_AddResource() {
	s := server.New(protocol.Implementation{Name: "docs", Version: "1.0.0"}, nil)
	s.AddResource(&protocol.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{
				{URI: uri, MIMEType: "text/markdown", Text: "# Docs"},
			}}, nil
		})
	s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "docs://pages/{page}", Name: "page"},
		func(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
			return &protocol.ReadResourceResult{Contents: []protocol.ResourceContents{
				{URI: uri, Text: "the page at " + uri},
			}}, nil
		})

	c, done := connect(s, nil)
	defer done()
	ctx := context.Background()
	for r, err := range c.Resources(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("resource:", r.URI, r.MIMEType)
	}
	for _, uri := range []string{"docs://readme", "docs://pages/intro"} {
		res, err := c.ReadResource(ctx, uri)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Contents[0].Text)
	}
	_, err := c.ReadResource(ctx, "docs://nothing")
	fmt.Println(err != nil)
	// Output:
	// resource: docs://readme text/markdown
	// # Docs
	// the page at docs://pages/intro
	// true
}

// Prompts: a template with arguments, filled in by the handler.
func ExampleServer_AddPrompt() {
	s := server.New(protocol.Implementation{Name: "review", Version: "1.0.0"}, nil)
	s.AddPrompt(&protocol.Prompt{
		Name:        "review",
		Description: "Reviews a piece of code",
		Arguments:   []protocol.PromptArgument{{Name: "language", Required: true}},
	}, func(ctx context.Context, req *server.Request, args map[string]string) (*protocol.GetPromptResult, error) {
		return &protocol.GetPromptResult{Messages: []protocol.PromptMessage{{
			Role:    "user",
			Content: protocol.TextContent("Review this " + args["language"] + " code."),
		}}}, nil
	})

	c, done := connect(s, nil)
	defer done()
	ctx := context.Background()
	for p, err := range c.Prompts(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(p.Name+":", p.Description)
	}
	res, err := c.GetPrompt(ctx, "review", map[string]string{"language": "Go"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Messages[0].Role, res.Messages[0].Content.Text)
	// Output:
	// review: Reviews a piece of code
	// user Review this Go code.
}
