package wiretest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/agent"
	"github.com/ferrymcp/ferry/agent/wiretest/fakemodel"
	"github.com/ferrymcp/ferry/jsonschema"
	"github.com/ferrymcp/ferry/jsonschema/full"
)

// The 12306 flow as a script sees it: the ferry command, built, runs the
// question with --format ndjson on each provider through Ollama's
// middleware; every line is valid against agent/event.schema.json, and
// the lines tell the flow: each of the 12306 tools asked, started and
// finished in that order, the answer's text, the usage, the result last.
func Test12306FlowNDJSON(t *testing.T) {
	root := repoRoot()
	ferry := buildFerry(t, root)
	schema := eventSchema(t, root)
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	servers := fmt.Sprintf(`{"mcpServers":{"12306-mcp":{"command":%q,"env":{"TRAIN12306_TODAY":"2026-11-25"}}}}`, trainBin)
	if err := os.WriteFile(cfg, []byte(servers), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ name, base string }{{"openai", "/v1"}, {"anthropic", ""}} {
		t.Run(p.name, func(t *testing.T) {
			_, base := startModel(t, fakemodel.Train12306)
			cmd := exec.Command(ferry, "run", "--config", cfg, "--model", p.name+"/fake", "--base-url", base+p.base,
				"--approval", "auto", "--format", "ndjson", "-p", "明天从北京到上海有哪些火车？")
			cmd.Env = append(os.Environ(), "FERRY_MODEL=", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir(),
				"OPENAI_API_KEY=sk-test", "ANTHROPIC_API_KEY=sk-ant-test")
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Run(); err != nil {
				t.Fatalf("ferry run: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
			}
			events := readStream(t, schema, out.Bytes())
			checkFlow(t, events)
			if t.Failed() {
				t.Logf("the stream:\n%s", out.String())
			}
		})
	}
}

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// buildFerry builds the ferry command in its workspace, as
// scripts/test.sh builds it.
func buildFerry(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ferry")
	build := exec.Command("go", "build", "-o", bin, "./cmd/ferry")
	build.Dir = root
	build.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building ferry: %v\n%s", err, out)
	}
	return bin
}

// eventSchema compiles the schema of the ndjson lines, checked against
// its metaschema.
func eventSchema(t *testing.T, root string) *jsonschema.Validator {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "agent", "event.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.CompileJSON(raw, &jsonschema.CompileOptions{Engine: full.Engine{}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// readStream validates each line of the stream and reads it as an
// event.
func readStream(t *testing.T, schema *jsonschema.Validator, out []byte) []agent.Event {
	t.Helper()
	var events []agent.Event
	for i, line := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if err := schema.Validate(line); err != nil {
			t.Errorf("line %d is not valid against event.schema.json: %v\n%s", i+1, err, line)
		}
		var e agent.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("line %d: %v\n%s", i+1, err, line)
		}
		events = append(events, e)
	}
	return events
}

// checkFlow checks the events of the 12306 turn: its kinds in order
// (consecutive text events as one), each call's events naming the same
// call, and the result.
func checkFlow(t *testing.T, events []agent.Event) {
	t.Helper()
	call := "tool_asked tool_approved tool_started tool_finished"
	want := strings.Join([]string{"text step", call, "text step", call, "step", call, "text step usage result"}, " ")
	if got := kindsOf(events); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
	var tools []string
	var text strings.Builder
	for i, e := range events {
		switch {
		case e.Kind == agent.EventText:
			text.WriteString(e.Text)
		case e.Kind == agent.EventToolAsked:
			checkCall(t, events[i:i+4])
		case e.Kind == agent.EventToolEnd:
			tools = append(tools, e.Call.Tool)
		}
	}
	if strings.Join(tools, " ") != "get-current-date get-station-code-of-citys get-tickets" {
		t.Errorf("calls %v", tools)
	}
	res := events[len(events)-1].Result
	usage := events[len(events)-2].Usage
	if res == nil || res.Error != nil || res.Steps != 4 || len(res.Calls) != 3 || res.Usage != usage || usage.InputTokens == 0 || usage.OutputTokens == 0 {
		t.Fatalf("result %+v, usage %+v", res, usage)
	}
	for _, want := range []string{"1. G1 北京南 07:00 开，上海虹桥 11:29 到，历时 04:29", "共 5 趟。"} {
		if !strings.Contains(res.Answer, want) || !strings.Contains(text.String(), want) {
			t.Errorf("the answer lacks %q:\n%s\nstreamed:\n%s", want, res.Answer, text.String())
		}
	}
}

// checkCall checks the four events of one call: the same call, resolved
// once approved to the 12306 server's tool, finished with a result.
func checkCall(t *testing.T, es []agent.Event) {
	t.Helper()
	first, last := es[0].Call, es[len(es)-1].Call
	for i, e := range es {
		if e.Call == nil || e.Call.ID != first.ID || e.Call.Name != first.Name || (i > 0 && e.Call.Server != "12306-mcp") {
			t.Errorf("%v of call %s: %+v", e.Kind, first.ID, e.Call)
		}
	}
	if last.Result == "" || last.Error != "" || last.IsError {
		t.Errorf("%s finished with %q, error %q", last.Tool, last.Result, last.Error)
	}
}

// kindsOf is the kinds of the events, consecutive text events as one.
func kindsOf(events []agent.Event) string {
	var kinds []string
	for _, e := range events {
		k := e.Kind.String()
		if k != "text" || len(kinds) == 0 || kinds[len(kinds)-1] != "text" {
			kinds = append(kinds, k)
		}
	}
	return strings.Join(slices.Clip(kinds), " ")
}
