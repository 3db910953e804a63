package interop

// ferry's example server driven by the MCP Inspector's CLI
// (@modelcontextprotocol/inspector, pinned in node/package.json) over stdio,
// in both protocol eras.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// inspectorCase is one Inspector CLI invocation and the checks of its
// result.
type inspectorCase struct {
	method string
	name   string   // subtest name; the method when empty
	args   []string // after --method
	// check looks at the result object (the "result" member of the CLI's
	// --format json output).
	check func(t *testing.T, res json.RawMessage)
	// statelessMeta: in the stateless era the result carries the server's
	// identity in _meta (the CLI shows it for these methods).
	statelessMeta bool
}

var exampleToolNames = []string{"add", "ask_name", "countdown", "echo", "fail", "log", "roots", "summarize", "weather"}

var inspectorCases = []inspectorCase{
	{method: "tools/list", check: func(t *testing.T, res json.RawMessage) {
		var r struct {
			Tools []struct {
				Name         string          `json:"name"`
				InputSchema  json.RawMessage `json:"inputSchema"`
				OutputSchema *struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
				} `json:"outputSchema"`
			} `json:"tools"`
		}
		decodeInto(t, res, &r)
		var names []string
		for _, tool := range r.Tools {
			names = append(names, tool.Name)
			if len(tool.InputSchema) == 0 {
				t.Errorf("tool %s has no inputSchema", tool.Name)
			}
			if tool.Name != "weather" {
				continue
			}
			os := tool.OutputSchema
			if os == nil {
				t.Fatal("weather has no outputSchema")
			}
			props := slices.Sorted(maps.Keys(os.Properties))
			if os.Type != "object" || !slices.Equal(props, []string{"city", "conditions", "temperature", "unit"}) {
				t.Errorf("weather outputSchema: type %q, properties %v", os.Type, props)
			}
			if !slices.Equal(slices.Sorted(slices.Values(os.Required)), props) {
				t.Errorf("weather outputSchema requires %v, want %v", os.Required, props)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, exampleToolNames) {
			t.Errorf("tools %v, want %v", names, exampleToolNames)
		}
	}},
	{method: "tools/call", name: "echo", args: []string{"--tool-name", "echo", "--tool-arg", "message=hello, inspector"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			r := decodeToolResult(t, res)
			if r.IsError || len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "hello, inspector" {
				t.Errorf("echo: %s", res)
			}
			if r.StructuredContent != nil {
				t.Errorf("echo has no outputSchema but returned structuredContent %s", r.StructuredContent)
			}
		}},
	{method: "tools/call", name: "add", args: []string{"--tool-name", "add", "--tool-arg", "a=2", "b=3.5"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			r := decodeToolResult(t, res)
			assertJSONEqual(t, "add structuredContent", r.StructuredContent, `{"sum":5.5}`)
			if r.IsError || len(r.Content) != 1 || r.Content[0].Text != `{"sum":5.5}` {
				t.Errorf("add content: %s", res)
			}
		}},
	{method: "tools/call", name: "weather", args: []string{"--tool-name", "weather", "--tool-arg", "city=Paris", "unit=fahrenheit"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			r := decodeToolResult(t, res)
			want := `{"city":"Paris","temperature":70.7,"unit":"fahrenheit","conditions":"sunny"}`
			assertJSONEqual(t, "weather structuredContent", r.StructuredContent, want)
			if r.IsError || len(r.Content) != 1 {
				t.Fatalf("weather content: %s", res)
			}
			// The text block carries the same JSON for clients that do not
			// read structuredContent.
			assertJSONEqual(t, "weather text", json.RawMessage(r.Content[0].Text), want)
		}},
	{method: "resources/list", check: func(t *testing.T, res json.RawMessage) {
		var r struct {
			Resources []struct{ URI, Name, MIMEType string } `json:"resources"`
		}
		decodeInto(t, res, &r)
		got := map[string]string{}
		for _, x := range r.Resources {
			got[x.URI] = x.MIMEType
		}
		want := map[string]string{"ferry://readme": "text/markdown", "ferry://logo.png": "image/png"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("resources (uri: mimeType) %v, want %v", got, want)
		}
	}},
	{method: "resources/read", name: "readme", args: []string{"--uri", "ferry://readme"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			assertContents(t, res, "ferry://readme", "text/markdown", "# ferry everything\n\nAn example server exercising every MCP feature.\n")
		}},
	{method: "resources/read", name: "template", args: []string{"--uri", "ferry://greeting/bob"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			assertContents(t, res, "ferry://greeting/bob", "text/plain", "Hello, bob!")
		}},
	{method: "resources/templates/list", check: func(t *testing.T, res json.RawMessage) {
		var r struct {
			ResourceTemplates []struct{ URITemplate, Name string } `json:"resourceTemplates"`
		}
		decodeInto(t, res, &r)
		if len(r.ResourceTemplates) != 1 || r.ResourceTemplates[0].URITemplate != "ferry://greeting/{name}" || r.ResourceTemplates[0].Name != "greeting" {
			t.Errorf("templates: %s", res)
		}
	}},
	{method: "prompts/list", check: func(t *testing.T, res json.RawMessage) {
		var r struct {
			Prompts []struct {
				Name      string `json:"name"`
				Arguments []struct {
					Name     string `json:"name"`
					Required bool   `json:"required"`
				} `json:"arguments"`
			} `json:"prompts"`
		}
		decodeInto(t, res, &r)
		var got []string
		for _, p := range r.Prompts {
			s := p.Name + "("
			for i, a := range p.Arguments {
				if i > 0 {
					s += ","
				}
				s += a.Name
				if a.Required {
					s += "!"
				}
			}
			got = append(got, s+")")
		}
		slices.Sort(got)
		if want := []string{"review(language!,style)", "simple()"}; !slices.Equal(got, want) {
			t.Errorf("prompts %v, want %v", got, want)
		}
	}},
	{method: "prompts/get", name: "review", args: []string{"--prompt-name", "review", "--prompt-args", "language=go"}, statelessMeta: true,
		check: func(t *testing.T, res json.RawMessage) {
			var r struct {
				Description string `json:"description"`
				Messages    []struct {
					Role    string `json:"role"`
					Content struct {
						Type     string `json:"type"`
						Text     string `json:"text"`
						Resource struct{ URI, Text string }
					} `json:"content"`
				} `json:"messages"`
			}
			decodeInto(t, res, &r)
			if r.Description != "Code review" || len(r.Messages) != 2 {
				t.Fatalf("review: %s", res)
			}
			if m := r.Messages[0]; m.Role != "user" || m.Content.Type != "text" || m.Content.Text != "Please give a brief review of my go code." {
				t.Errorf("review message 0: %+v", m)
			}
			if m := r.Messages[1]; m.Role != "user" || m.Content.Type != "resource" || m.Content.Resource.URI != "ferry://readme" || m.Content.Resource.Text != "# ferry everything" {
				t.Errorf("review message 1: %+v", m)
			}
		}},
}

func TestInspectorCLIFerryServer(t *testing.T) {
	launcher := nodePackageBin(t, "@modelcontextprotocol/inspector", "clients/launcher/build/index.js")
	// The CLI keeps a catalog and client config under the home directory:
	// give it one of its own.
	home := t.TempDir()
	for _, era := range []string{"legacy", "stateless"} {
		t.Run(era, func(t *testing.T) {
			for _, tc := range inspectorCases {
				name := tc.method
				if tc.name != "" {
					name += "/" + tc.name
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					args := []string{launcher, "--cli", "--format", "json", "--protocol-era", inspectorEra(era), "--method", tc.method}
					args = append(args, tc.args...)
					// "--" ends the variadic options (--tool-arg, --prompt-args)
					// before the target command.
					args = append(args, "--", exampleServer)
					res := runInspector(t, home, args)
					tc.check(t, res)
					checkResultEra(t, era, tc.statelessMeta, res)
				})
			}
		})
	}
}

// runInspector runs the Inspector CLI and returns the result member of its
// JSON output.
func runInspector(t *testing.T, home string, args []string) json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Env = append(cmd.Environ(), "HOME="+home, "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil || err != nil || out.Error != nil || out.Result == nil {
		t.Fatalf("inspector %s: %v (json: %v)\nstdout: %s\nstderr: %s", strings.Join(args[1:], " "), err, jerr, stdout.Bytes(), stderr.Bytes())
	}
	return out.Result
}

// TestExampleServerEndsListenAtEOF: a stdio client that closes the
// server's stdin while a subscriptions/listen stream is open (the
// Inspector keeps one open in the stateless era) must get the stream's
// completion result and see the server exit by itself. ferry used to leave
// the stream open until its 5-second drain ran out, so the Inspector's
// every stateless run waited for it and ended the server with SIGTERM.
func TestExampleServerEndsListenAtEOF(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exampleServer)
	cmd.WaitDelay = 2 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"interop","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{%s,"notifications":{"toolsListChanged":true}}}`+"\n", meta)

	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result *struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	lines := bufio.NewScanner(stdout)
	var seen []string
	next := func() (msg, bool) {
		if !lines.Scan() {
			return msg{}, false
		}
		seen = append(seen, lines.Text())
		var m msg
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("server wrote %q: %v", lines.Text(), err)
		}
		return m, true
	}
	if m, ok := next(); !ok || m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("want the acknowledgement first, got %q", seen)
	}
	// The client is done: close the server's stdin.
	stdin.Close()
	m, ok := next()
	if !ok || string(m.ID) != `"listen-1"` || m.Result == nil || m.Result.ResultType != "complete" {
		t.Fatalf("after EOF, want the listen stream's completion result; got %q", seen)
	}
	if id := string(m.Result.Meta["io.modelcontextprotocol/subscriptionId"]); id != `"listen-1"` {
		t.Errorf("completion result subscriptionId %s", id)
	}
	if rest, _ := io.ReadAll(stdout); len(bytes.TrimSpace(rest)) > 0 {
		t.Errorf("more output after the completion result: %s", rest)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("server exit: %v", err)
	}
}

func decodeInto(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
}

type inspectorToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func decodeToolResult(t *testing.T, raw json.RawMessage) inspectorToolResult {
	t.Helper()
	var r inspectorToolResult
	decodeInto(t, raw, &r)
	return r
}

func assertContents(t *testing.T, raw json.RawMessage, uri, mimeType, text string) {
	t.Helper()
	var r struct {
		Contents []struct{ URI, MIMEType, Text, Blob string } `json:"contents"`
	}
	decodeInto(t, raw, &r)
	if len(r.Contents) != 1 {
		t.Fatalf("want one contents, got %s", raw)
	}
	c := r.Contents[0]
	if c.URI != uri || c.MIMEType != mimeType || c.Text != text || c.Blob != "" {
		t.Errorf("contents %+v, want uri %q mimeType %q text %q", c, uri, mimeType, text)
	}
}

func assertJSONEqual(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %s is not JSON: %v", what, got, err)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s: got %s, want %s", what, got, want)
	}
}

// checkResultEra checks that a result the Inspector printed carries the
// _meta of the era it was asked in: ferry's serverInfo in the stateless era
// (when the method's result has it), nothing stateless in the legacy era.
func checkResultEra(t *testing.T, era string, statelessMeta bool, res []byte) {
	t.Helper()
	var r struct {
		Meta map[string]struct{ Name string } `json:"_meta"`
	}
	decodeInto(t, res, &r)
	info, ok := r.Meta["io.modelcontextprotocol/serverInfo"]
	switch {
	case era == "stateless" && statelessMeta && (!ok || info.Name != "ferry-everything"):
		t.Errorf("stateless era: the result has no _meta serverInfo of ferry-everything (not spoken in 2026-07-28?): %s", res)
	case era == "legacy" && ok:
		t.Errorf("legacy era: the result carries stateless _meta: %s", res)
	}
}

// inspectorEra is the Inspector CLI's --protocol-era value for an era:
// the CLI calls the stateless revisions "modern", as the specification's
// terminology does.
func inspectorEra(era string) string {
	if era == "stateless" {
		return "modern"
	}
	return era
}
