package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

func newServer() *server.Server {
	return server.New(protocol.Implementation{Name: "t", Version: "1"}, nil)
}

func echoTool(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
	return &protocol.CallToolResult{}, nil
}

func readNothing(ctx context.Context, req *server.Request, uri string) (*protocol.ReadResourceResult, error) {
	return &protocol.ReadResourceResult{}, nil
}

// TestRegistrationPanics: what would make every call fail, or some client
// stumble, panics at registration with a message naming the mistake, as
// http.Handle does for a bad pattern (on a12c33f all of these were
// accepted).
func TestRegistrationPanics(t *testing.T) {
	tests := []struct {
		name     string
		register func(s *server.Server)
		panic    string // "" for none
	}{
		{"int input", func(s *server.Server) {
			server.AddTool(s, &protocol.Tool{Name: "n"}, func(ctx context.Context, req *server.Request, in int) (string, error) { return "", nil })
		}, `server: tool "n": input schema: the root's "type" is "integer"`},
		{"non-object raw schema", func(s *server.Server) {
			s.AddTool(&protocol.Tool{Name: "s", InputSchema: jsontext.Value(`{"type":"string"}`)}, echoTool)
		}, `server: tool "s": input schema: the root's "type" is "string"`},
		{"schema without type", func(s *server.Server) {
			s.AddTool(&protocol.Tool{Name: "s", InputSchema: jsontext.Value(`{"properties":{}}`)}, echoTool)
		}, `the root has no "type"`},
		{"empty name", func(s *server.Server) { s.AddTool(&protocol.Tool{}, echoTool) }, `tool name "": a tool name has 1 to 128 characters`},
		{"long name", func(s *server.Server) { s.AddTool(&protocol.Tool{Name: strings.Repeat("x", 129)}, echoTool) }, "1 to 128 characters"},
		{"space in name", func(s *server.Server) { s.AddTool(&protocol.Tool{Name: "has space"}, echoTool) }, `tool name "has space": ' ' is not allowed`},
		{"comma in name", func(s *server.Server) { s.AddTool(&protocol.Tool{Name: "a,b"}, echoTool) }, `',' is not allowed`},
		{"nil raw handler", func(s *server.Server) { s.AddTool(&protocol.Tool{Name: "x"}, nil) }, `server: tool "x": nil handler`},
		{"nil typed handler", func(s *server.Server) {
			server.AddTool[struct{}, string](s, &protocol.Tool{Name: "x"}, nil)
		}, `server: tool "x": nil handler`},
		{"relative resource URI", func(s *server.Server) {
			s.AddResource(&protocol.Resource{URI: "readme", Name: "readme"}, readNothing)
		}, `server: resource URI "readme" is not absolute`},
		{"nil resource handler", func(s *server.Server) {
			s.AddResource(&protocol.Resource{URI: "notes://readme"}, nil)
		}, `server: resource "notes://readme": nil handler`},
		{"relative template", func(s *server.Server) {
			s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "notes/{id}"}, readNothing)
		}, `server: resource template "notes/{id}" is not absolute`},
		{"nil template handler", func(s *server.Server) {
			s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "note://{id}"}, nil)
		}, "nil handler"},
		{"unnamed prompt", func(s *server.Server) { s.AddPrompt(&protocol.Prompt{}, nil) }, "a prompt needs a name"},
		{"nil prompt handler", func(s *server.Server) { s.AddPrompt(&protocol.Prompt{Name: "p"}, nil) }, `server: prompt "p": nil handler`},

		// The specification's own examples, and what ferry's users write.
		{"valid names", func(s *server.Server) {
			for _, name := range []string{"getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b", strings.Repeat("x", 128)} {
				s.AddTool(&protocol.Tool{Name: name}, echoTool)
			}
		}, ""},
		{"map and raw input", func(s *server.Server) {
			server.AddTool(s, &protocol.Tool{Name: "m"}, func(ctx context.Context, req *server.Request, in map[string]any) (string, error) { return "", nil })
			server.AddTool(s, &protocol.Tool{Name: "r"}, func(ctx context.Context, req *server.Request, in jsontext.Value) (string, error) { return "", nil })
		}, ""},
		{"valid URIs", func(s *server.Server) {
			s.AddResource(&protocol.Resource{URI: "file:///etc/motd"}, readNothing)
			s.AddResource(&protocol.Resource{URI: "x-notes+v1.2:readme"}, readNothing)
			s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "file:///{path}"}, readNothing)
			s.AddResourceTemplate(&protocol.ResourceTemplate{URITemplate: "{+uri}"}, readNothing)
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := func() (msg string) {
				defer func() {
					if p := recover(); p != nil {
						msg = fmt.Sprint(p)
					}
				}()
				tt.register(newServer())
				return ""
			}()
			switch {
			case tt.panic == "" && got != "":
				t.Errorf("panicked: %s", got)
			case tt.panic != "" && !strings.Contains(got, tt.panic):
				t.Errorf("panic %q, want one containing %q", got, tt.panic)
			}
		})
	}
}

// TestCheckTool: a gateway re-serving tools it did not write can check
// them without a panic.
func TestCheckTool(t *testing.T) {
	for tool, want := range map[*protocol.Tool]string{
		{Name: "ok"}: "",
		{Name: "ok", InputSchema: jsontext.Value(`{"type":"object","properties":{}}`)}: "",
		{Name: "bad name"}: `' ' is not allowed`,
		{Name: "ok", InputSchema: jsontext.Value(`{"type":"array"}`)}: `the root's "type" is "array"`,
		{Name: "ok", InputSchema: jsontext.Value(`[]`)}:               "not a JSON object",
	} {
		err := server.CheckTool(tool)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckTool(%+v) = %v, want %q", tool, err, want)
		}
	}
}

type searchIn struct {
	Query string   `json:"query"`
	Limit int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50,default=10"`
	Exact bool     `json:"exact,omitempty" jsonschema:"default=true"`
	Ratio float64  `json:"ratio,omitempty" jsonschema:"default=0.5"`
	Tags  []string `json:"tags,omitempty" jsonschema:"default=[\"a\"]"` // shared memory: not applied
}

type greetIn struct {
	Name     string `json:"name"`
	Greeting string `json:"greeting,omitempty" jsonschema:"default=Hello"`
}

// TestInputDefaults: default=V in a tag is what the handler sees for an
// omitted argument (on a12c33f it saw zero); a given argument, false or 0
// included, wins.
func TestInputDefaults(t *testing.T) {
	s := newServer()
	server.AddTool(s, &protocol.Tool{Name: "search"}, func(ctx context.Context, req *server.Request, in searchIn) (string, error) {
		return fmt.Sprintf("%s %d %v %v %v", in.Query, in.Limit, in.Exact, in.Ratio, in.Tags), nil
	})
	// All fields strings: the decoder's fast path.
	server.AddTool(s, &protocol.Tool{Name: "greet"}, func(ctx context.Context, req *server.Request, in greetIn) (string, error) {
		return in.Greeting + ", " + in.Name, nil
	})
	for _, v := range eras {
		t.Run(v, func(t *testing.T) {
			c := connectPipe(t, s, interviewOptions(v))
			for _, tc := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"search", map[string]any{"query": "q"}, "q 10 true 0.5 []"},
				{"search", map[string]any{"query": "q", "limit": 3, "exact": false, "ratio": 0, "tags": []string{"b"}}, "q 3 false 0 [b]"},
				{"greet", map[string]any{"name": "Ann"}, "Hello, Ann"},
				{"greet", map[string]any{"name": "Ann", "greeting": "Hi"}, "Hi, Ann"},
			} {
				res, err := c.Call(context.Background(), tc.tool, tc.args)
				if err != nil || res.IsError || res.Content[0].Text != tc.want {
					t.Errorf("%s %v: %+v %v, want %q", tc.tool, tc.args, res, err, tc.want)
				}
			}
		})
	}
}
