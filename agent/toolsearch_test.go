package agent

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

var (
	catalogVerbs = []string{"list", "get", "create", "update", "delete"}
	catalogNouns = []string{"invoice", "customer", "order", "product", "shipment", "refund", "coupon", "review", "ticket", "webhook",
		"report", "warehouse", "supplier", "payment", "subscription", "category", "discount", "address", "employee", "contract"}
)

// catalogServer has 100 tools of the size of real ones: a description of
// a sentence or two, a schema of a few described parameters.
func catalogServer(name string) *server.Server {
	s := newServer(name)
	for _, verb := range catalogVerbs {
		for _, noun := range catalogNouns {
			tool := verb + "_" + noun
			schema := fmt.Sprintf(`{"type":"object","properties":{`+
				`"id":{"type":"string","description":"the %[1]s's identifier, as %[2]s lists it"},`+
				`"fields":{"type":"array","items":{"type":"string"},"description":"the fields of the %[1]s to return; all when absent"},`+
				`"limit":{"type":"integer","minimum":1,"maximum":100,"description":"how many at most"},`+
				`"dryRun":{"type":"boolean","description":"check the request without changing anything"}},"required":["id"]}`, noun, name)
			s.AddTool(&protocol.Tool{Name: tool, Description: fmt.Sprintf("%ss a %s in the %s account. "+
				"Use it when the user asks to %s one; the result is the %s as JSON, with its history.", strings.ToUpper(verb[:1])+verb[1:], noun, name, verb, noun),
				InputSchema: jsontext.Value(schema)},
				func(ctx context.Context, req *server.Request, args jsontext.Value) (*protocol.CallToolResult, error) {
					return textResult(name + ": " + tool + " done"), nil
				})
		}
	}
	return s
}

// requestSize is the size of a request as JSON, and its tokens as the
// agent estimates them.
func requestSize(t *testing.T, req Request) (int, int64) {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return len(b), estimateTokens(&req)
}

var firstHit = regexp.MustCompile(`(?m)^- (\S+):`)

// TestToolSearchForBigCatalogs: with 3 servers of 100 tools, the model
// is not sent 300 schemas: it searches, loads what it needs, and calls
// it; the figures of the first request with and without tool search are
// logged (bench/results/2026-11-29-agent-catalog.md).
func TestToolSearchForBigCatalogs(t *testing.T) {
	servers := map[string]*server.Server{"shop": catalogServer("shop"), "billing": catalogServer("billing"), "crm": catalogServer("crm")}
	h := startHost(t, servers, nil)

	all := &scripted{script: func(n int, req *Request) (*Reply, error) { return say("ok"), nil }}
	a := &Agent{Model: all, Tools: h, Limits: Limits{ToolSearchTools: -1, ToolSearchTokens: -1}}
	if _, err := a.Run(context.Background(), Text("refund the last order")); err != nil {
		t.Fatal(err)
	}
	full := all.requests()[0]

	var hit string
	m := &scripted{script: func(n int, req *Request) (*Reply, error) {
		switch n {
		case 1:
			return calls(ToolCall{ID: "s", Name: ToolSearchTool, Arguments: `{"query":"create a refund in billing"}`}), nil
		case 2:
			if h := firstHit.FindStringSubmatch(resultText(lastResults(t, *req)[0])); h != nil {
				hit = h[1]
			}
			return calls(ToolCall{ID: "l", Name: ToolLoadTool, Arguments: fmt.Sprintf(`{"names":[%q]}`, hit)}), nil
		case 3:
			return calls(ToolCall{ID: "c", Name: hit, Arguments: `{"id":"r1"}`}), nil
		}
		return say("done"), nil
	}}
	a = &Agent{Model: m, Tools: h, Policy: &Policy{Mode: Auto}}
	res, err := a.Run(context.Background(), Text("refund the last order"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.requests()
	if len(full.Tools) != 300 || names(reqs[0].Tools) != ToolSearchTool+" "+ToolLoadTool {
		t.Fatalf("without search %d tools; with search, the first request's tools: %s", len(full.Tools), names(reqs[0].Tools))
	}
	if hit != "billing__create_refund" {
		t.Errorf("the best match of %q is %q:\n%s", "create a refund in billing", hit, resultText(lastResults(t, reqs[1])[0]))
	}
	if got := names(reqs[2].Tools); got != hit+" "+ToolSearchTool+" "+ToolLoadTool {
		t.Errorf("after loading, the tools are %s", got)
	}
	if r := lastResults(t, reqs[3])[0]; resultText(r) != "billing: create_refund done" || res.Calls[2].Server != "billing" {
		t.Errorf("the loaded tool's call: %q", resultText(r))
	}
	fullBytes, fullTokens := requestSize(t, full)
	searchBytes, searchTokens := requestSize(t, reqs[0])
	t.Logf("300 tools (3 servers of 100): first request without tool search %d bytes, ~%d tokens; with tool search %d bytes, ~%d tokens (%.1f%%)",
		fullBytes, fullTokens, searchBytes, searchTokens, 100*float64(searchBytes)/float64(fullBytes))
	loadedBytes, loadedTokens := requestSize(t, reqs[2])
	t.Logf("after searching and loading one tool: %d bytes, ~%d tokens", loadedBytes, loadedTokens)
	if searchBytes*5 > fullBytes {
		t.Errorf("with tool search the request is %d bytes, without %d", searchBytes, fullBytes)
	}
}

func names(specs []ToolSpec) string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return strings.Join(out, " ")
}

// TestToolSearchThresholds: search is on above either threshold, and a
// load names tools that are there.
func TestToolSearchThresholds(t *testing.T) {
	h := startHost(t, map[string]*server.Server{"shop": catalogServer("shop")}, nil)
	tests := []struct {
		name   string
		lim    Limits
		search bool
	}{
		{"100 tools, over the default 40", Limits{}, true},
		{"under a threshold of tools", Limits{ToolSearchTools: 200}, true}, // still over 10k tokens
		{"under both", Limits{ToolSearchTools: 200, ToolSearchTokens: 100_000}, false},
		{"over tokens only", Limits{ToolSearchTools: -1, ToolSearchTokens: 1000}, true},
		{"never", Limits{ToolSearchTools: -1, ToolSearchTokens: -1}, false},
	}
	for _, tt := range tests {
		a := &Agent{Tools: h}
		ts := a.listTools(context.Background(), tt.lim.withDefaults())
		if got := ts.builtins[ToolSearchTool] != nil; got != tt.search || (got && len(ts.specs) != 2) || (!got && len(ts.specs) != 100) {
			t.Errorf("%s: search %v with %d tools", tt.name, got, len(ts.specs))
		}
	}
	a := &Agent{Tools: h}
	ts := a.listTools(context.Background(), Limits{}.withDefaults())
	load := ts.builtins[ToolLoadTool]
	for args, want := range map[string]string{
		`{"names":["shop__nope"]}`:                          "no tools named shop__nope",
		`{"names":[]}`:                                      "takes",
		`{"names":["shop__get_order","x"]}`:                 "Loaded: shop__get_order.",
		`{"names":[` + strings.Repeat(`"a",`, 20) + `"a"]}`: "at most 20",
	} {
		res, err := load(context.Background(), jsontext.Value(args))
		if got := fmt.Sprint(err) + resultTextOf(res); !strings.Contains(got, want) {
			t.Errorf("%s: %s, want %q", args, got, want)
		}
	}
}

func resultTextOf(res *protocol.CallToolResult) string {
	if res == nil {
		return ""
	}
	return resultText(&ToolResult{Content: ContentParts(res.Content)})
}
