package interop

// ferry's client against @modelcontextprotocol/server-everything (the
// reference "everything" server on the TypeScript SDK) over stdio: era
// detection, then every tool, resource, template and prompt it lists,
// completion, logging and resource subscriptions.

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/internal/leakcheck"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/transport/stdio"
)

// Canned answers of the client's callbacks, looked for in the tools'
// results.
const (
	cannedSample = "A canned answer from ferry's interop client."
	cannedModel  = "ferry-canned-model"
	testRootURI  = "file:///tmp/ferry-interop-root"
	testRootName = "ferry interop root"
)

// everythingTool says how to call one tool of server-everything where the
// arguments built from its input schema are not enough, and what to check
// in its result.
type everythingTool struct {
	// args replace the generated arguments member by member.
	args map[string]any
	// progress: the tool runs long and reports progress; the call gets a
	// progress callback, a generous timeout, and must see this many
	// notifications.
	progress int
	// isError is why a tool error result is expected (empty: it is not).
	isError string
	// contains is text the result's content must include.
	contains []string
	// structured lists members its structuredContent must have.
	structured []string
}

// everythingTools are the tools with overrides or checks. A tool it does not
// name is called with generated arguments and must not fail.
var everythingTools = map[string]everythingTool{
	"echo":    {contains: []string{"Echo: test"}},
	"get-sum": {contains: []string{"2"}},
	"get-env": {contains: []string{"PATH"}},
	// The defaults (duration 10s) would make the suite slow.
	"trigger-long-running-operation": {args: map[string]any{"duration": 1.2, "steps": 3}, progress: 3,
		contains: []string{"Long running operation completed"}},
	// The default data is a URL on raw.githubusercontent.com: stay offline.
	"gzip-file-as-resource": {args: map[string]any{
		"name": "interop.txt.gz",
		"data": "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("ferry interop\n")),
	}, contains: []string{"demo://resource/session/interop.txt.gz"}},
	"get-structured-content":      {structured: []string{"temperature", "conditions", "humidity"}},
	"trigger-sampling-request":    {contains: []string{cannedSample, cannedModel}},
	"trigger-elicitation-request": {contains: []string{"User provided the requested information", "Name: test"}},
	"trigger-url-elicitation":     {args: map[string]any{"url": "https://example.com/ferry"}, contains: []string{"User completed the URL elicitation flow"}},
	"get-roots-list":              {contains: []string{testRootURI, testRootName}},
	"toggle-simulated-logging":    {contains: []string{"Started simulated"}},
	"toggle-subscriber-updates":   {contains: []string{"Started simulated resource updated notifications"}},
	// server-everything's McpServer answers a call without "task" with a
	// tool error (it wraps its McpError MethodNotFound into isError); ferry's
	// client has no tasks/get or tasks/result API to poll a task with.
	"simulate-research-query": {isError: "taskSupport is \"required\": the server refuses a call without task augmentation", contains: []string{"requires task augmentation"}},
}

// everythingPrompts are prompt arguments the generic values do not satisfy.
var everythingPrompts = map[string]map[string]string{
	"resource-prompt":    {"resourceType": "Text", "resourceId": "1"},
	"completable-prompt": {"department": "Engineering", "name": "Alice"},
}

// conditionalTools are registered by server-everything only for a client
// that declares the matching capability: seeing them shows the server got
// ferry's capabilities.
var conditionalTools = []string{"get-roots-list", "trigger-elicitation-request", "trigger-sampling-request", "trigger-url-elicitation"}

func TestServerEverything(t *testing.T) {
	requireNode(t)
	entry := nodePackageBin(t, "@modelcontextprotocol/server-everything", "dist/index.js")
	for _, tc := range []struct {
		name    string
		version string // empty: detect
	}{
		{"detect", ""},
		{"pinned-2025-11-25", protocol.Version20251125},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every goroutine the client started must be gone at the end.
			leakcheck.Check(t)
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			x := startEverything(ctx, t, entry, tc.version)
			pid := x.stream.Pid()

			if x.c.Stateless() || x.c.ProtocolVersion() != protocol.Version20251125 {
				t.Fatalf("era: stateless=%v version=%q, want legacy 2025-11-25", x.c.Stateless(), x.c.ProtocolVersion())
			}
			if got := x.c.ServerInfo().Name; got != "mcp-servers/everything" {
				t.Errorf("server name %q", got)
			}
			if tc.version == "" {
				x.checkFallback(t)
			} else if n := x.logs.count("server/discover failed"); n != 0 {
				t.Errorf("a pinned version must not probe; got %d fallback records", n)
			}

			x.exercise(ctx, t)

			// Client.Close reports why the connection ended, which after a
			// Close of our own is jsonrpc.ErrClosed ("closed by this side").
			if err := x.c.Close(); err != nil && !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("Close: %v", err)
			}
			select {
			case <-x.stream.Done():
				// server-everything does not exit when its stdin closes
				// (its timers keep Node alive), so Close ends it with
				// SIGTERM after CloseTimeout.
				t.Logf("server exit after Close: %v", cmp.Or[any](x.stream.ExitErr(), "exit status 0"))
			default:
				t.Error("the server process was not reaped by Close")
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("server pid %d still exists after Close (kill 0: %v)", pid, err)
			}
			if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("server process group %d still has members after Close (kill 0: %v)", pid, err)
			}
		})
	}
}

// everything is one connection to server-everything and what arrived on
// it.
type everything struct {
	c       *client.Client
	stream  *stdio.ClientStream
	logs    *slogRecorder
	msgs    chan *protocol.LoggingMessageParams
	updates chan string
	mu      sync.Mutex
	elicits []string // modes of the elicitations answered
	samples int
	roots   int
}

func startEverything(ctx context.Context, t *testing.T, entry, version string) *everything {
	t.Helper()
	cmd := &stdio.Command{Path: nodeBin, Args: []string{entry, "stdio"}}
	s, err := cmd.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	x := newEverything()
	x.stream = s
	x.c, err = client.Connect(ctx, client.StreamTransport{Stream: s}, x.clientOptions(version))
	if err != nil {
		s.Close()
		t.Fatalf("connect: %v\nserver stderr: %s", err, s.Stderr())
	}
	t.Cleanup(func() { x.c.Close() })
	return x
}

// checkFallback shows the detection at work: the server/discover probe was
// refused with a JSON-RPC error (not timed out), and the client went on
// with initialize.
func (x *everything) checkFallback(t *testing.T) {
	t.Helper()
	recs := x.logs.find("server/discover failed")
	if len(recs) != 1 {
		t.Fatalf("want one record of the probe falling back to initialize, got %d: %v", len(recs), x.logs.all())
	}
	var rpcErr *jsonrpc.Error
	err, _ := recs[0]["error"].(error)
	if !errors.As(err, &rpcErr) {
		t.Fatalf("the probe failed with %v (%T), want a JSON-RPC error from the server", recs[0]["error"], recs[0]["error"])
	}
	if rpcErr.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("probe error code %d, want %d (method not found)", rpcErr.Code, jsonrpc.CodeMethodNotFound)
	}
	t.Logf("probe: server/discover answered %d %q; fell back to initialize, got %s", rpcErr.Code, rpcErr.Message, x.c.ProtocolVersion())
}

func (x *everything) exercise(ctx context.Context, t *testing.T) {
	c := x.c
	caps := c.ServerCapabilities()
	if caps.Logging == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Tools == nil {
		t.Fatalf("server capabilities lack logging, resources.subscribe, prompts or tools: %+v", caps)
	}
	if !strings.Contains(c.Instructions(), "Everything Server") {
		t.Errorf("instructions: %.80q", c.Instructions())
	}

	// Logging at debug lets every simulated message through.
	if err := c.SetLogLevel(ctx, protocol.LevelDebug); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}

	resources, err := client.Collect(c.Resources(ctx))
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	if len(resources) == 0 {
		t.Fatal("no resources listed")
	}
	// Subscribe before the tools run: toggle-subscriber-updates sends an
	// update for every subscribed URI at once.
	subURI := resources[0].URI
	unsubscribe, err := c.Subscribe(ctx, subURI)
	if err != nil {
		t.Fatalf("resources/subscribe %s: %v", subURI, err)
	}

	tools := x.callEveryTool(ctx, t)

	// Logging: toggle-simulated-logging sends a message at once, then every
	// five seconds; its messages read "<Level>-level message".
	simulated := regexp.MustCompile(`(?i)level[- ]message`)
	var levels []protocol.LoggingLevel
	awaitEvent(t, 10*time.Second, "a simulated log message", func(deadline <-chan time.Time) bool {
		for {
			select {
			case m := <-x.msgs:
				levels = append(levels, m.Level)
				if s, ok := m.Data.(string); ok && simulated.MatchString(s) && m.Level.Rank() >= 0 {
					return true
				}
			case <-deadline:
				return false
			}
		}
	})
	t.Logf("log messages received at levels %v", levels)

	// Subscription: the update names the subscribed URI.
	awaitEvent(t, 10*time.Second, "notifications/resources/updated for "+subURI, func(deadline <-chan time.Time) bool {
		for {
			select {
			case uri := <-x.updates:
				if uri == subURI {
					return true
				}
				t.Errorf("update for %q, which was not subscribed", uri)
			case <-deadline:
				return false
			}
		}
	})
	if err := unsubscribe(ctx); err != nil {
		t.Errorf("resources/unsubscribe: %v", err)
	}

	// Resources again: gzip-file-as-resource added a session resource.
	resources, err = client.Collect(c.Resources(ctx))
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	if !slices.ContainsFunc(resources, func(r protocol.Resource) bool { return r.URI == "demo://resource/session/interop.txt.gz" }) {
		t.Error("the session resource made by gzip-file-as-resource is not listed")
	}
	for _, r := range resources {
		res, err := c.ReadResource(ctx, r.URI)
		if err != nil {
			t.Errorf("resources/read %s: %v", r.URI, err)
			continue
		}
		checkResourceContents(t, r.URI, res)
	}

	templates, err := client.Collect(c.ResourceTemplates(ctx))
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	if len(templates) == 0 {
		t.Fatal("no resource templates listed")
	}
	for _, tpl := range templates {
		uri := fillURITemplate(tpl.URITemplate, "1")
		res, err := c.ReadResource(ctx, uri)
		if err != nil {
			t.Errorf("resources/read %s (template %s): %v", uri, tpl.URITemplate, err)
			continue
		}
		checkResourceContents(t, uri, res)
	}
	// Completion of a template variable.
	if tpl := templates[0]; strings.Contains(tpl.URITemplate, "{resourceId}") {
		res, err := c.Complete(ctx, &protocol.CompleteParams{
			Ref:      protocol.CompleteRef{Type: protocol.RefResource, URI: tpl.URITemplate},
			Argument: protocol.CompleteArgument{Name: "resourceId", Value: "7"},
		})
		if err != nil {
			t.Errorf("completion/complete of %s: %v", tpl.URITemplate, err)
		} else if !slices.Equal(res.Completion.Values, []string{"7"}) {
			t.Errorf("completion of resourceId=7: %v, want [7]", res.Completion.Values)
		}
	}

	prompts, err := client.Collect(c.Prompts(ctx))
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	for _, p := range prompts {
		args := everythingPromptArgs(p)
		res, err := c.GetPrompt(ctx, p.Name, args)
		if err != nil {
			t.Errorf("prompts/get %s %v: %v", p.Name, args, err)
			continue
		}
		if len(res.Messages) == 0 {
			t.Errorf("prompts/get %s: no messages", p.Name)
		}
		for i, m := range res.Messages {
			if m.Role != protocol.RoleUser && m.Role != protocol.RoleAssistant || m.Content.Type == "" {
				t.Errorf("prompts/get %s: message %d is %+v", p.Name, i, m)
			}
		}
		if p.Name == "args-prompt" && !strings.Contains(res.Messages[0].Content.Text, "test") {
			t.Errorf("args-prompt does not use its argument: %q", res.Messages[0].Content.Text)
		}
	}

	// Completion of a prompt argument, with the context it depends on.
	comp, err := c.Complete(ctx, &protocol.CompleteParams{
		Ref:      protocol.CompleteRef{Type: protocol.RefPrompt, Name: "completable-prompt"},
		Argument: protocol.CompleteArgument{Name: "department", Value: "E"},
	})
	if err != nil {
		t.Errorf("completion/complete department: %v", err)
	} else if !slices.Equal(comp.Completion.Values, []string{"Engineering"}) {
		t.Errorf("completion of department=E: %v, want [Engineering]", comp.Completion.Values)
	}
	comp, err = c.Complete(ctx, &protocol.CompleteParams{
		Ref:      protocol.CompleteRef{Type: protocol.RefPrompt, Name: "completable-prompt"},
		Argument: protocol.CompleteArgument{Name: "name", Value: ""},
		Context:  &protocol.CompleteContext{Arguments: map[string]string{"department": "Sales"}},
	})
	if err != nil {
		t.Errorf("completion/complete name: %v", err)
	} else if !slices.Equal(comp.Completion.Values, []string{"David", "Eve", "Frank"}) {
		t.Errorf("completion of name in Sales: %v, want [David Eve Frank]", comp.Completion.Values)
	}

	if err := c.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	if !slices.Contains(x.elicits, protocol.ElicitForm) || !slices.Contains(x.elicits, protocol.ElicitURL) {
		t.Errorf("elicitations answered: %v, want form and url", x.elicits)
	}
	if x.samples == 0 || x.roots == 0 {
		t.Errorf("sampling requests answered: %d, roots requests: %d; want some of each", x.samples, x.roots)
	}
	t.Logf("exercised %d tools, %d resources, %d resource templates, %d prompts; answered %d elicitations, %d sampling and %d roots requests",
		tools, len(resources), len(templates), len(prompts), len(x.elicits), x.samples, x.roots)
}

// callEveryTool lists the tools and calls each; it returns how many.
func (x *everything) callEveryTool(ctx context.Context, t *testing.T) int {
	t.Helper()
	tools, err := client.Collect(x.c.Tools(ctx))
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	for _, want := range append(slices.Collect(maps.Keys(everythingTools)), conditionalTools...) {
		if !slices.Contains(names, want) {
			t.Errorf("tool %q is not listed (tools: %v)", want, names)
		}
	}
	for _, tool := range tools {
		spec := everythingTools[tool.Name]
		args, err := schemaArgs(tool.InputSchema)
		if err != nil {
			t.Errorf("%s: input schema: %v", tool.Name, err)
			continue
		}
		for k, v := range spec.args {
			args[k] = v
		}
		cctx := ctx
		var progress []float64
		var pmu sync.Mutex
		if spec.progress > 0 {
			cctx = client.WithProgress(cctx, func(p *protocol.ProgressParams) {
				pmu.Lock()
				progress = append(progress, p.Progress)
				pmu.Unlock()
			})
			cctx = client.WithTimeout(cctx, 30*time.Second, 60*time.Second)
		}
		res, err := x.c.Call(cctx, tool.Name, args)
		if err != nil {
			t.Errorf("tools/call %s %v: protocol error: %v", tool.Name, args, err)
			continue
		}
		text := joinContentText(res.Content)
		switch {
		case res.IsError && spec.isError == "":
			t.Errorf("tools/call %s %v: tool error: %s", tool.Name, args, text)
		case !res.IsError && spec.isError != "":
			t.Errorf("tools/call %s: expected a tool error (%s), got %s", tool.Name, spec.isError, text)
		case res.IsError:
			t.Logf("tools/call %s: tool error as expected (%s)", tool.Name, spec.isError)
		}
		if len(res.Content) == 0 {
			t.Errorf("tools/call %s: no content", tool.Name)
		}
		for _, want := range spec.contains {
			if !strings.Contains(text, want) {
				t.Errorf("tools/call %s: result lacks %q: %.300q", tool.Name, want, text)
			}
		}
		if len(spec.structured) > 0 {
			var sc map[string]any
			if err := json.Unmarshal(res.StructuredContent, &sc); err != nil {
				t.Errorf("tools/call %s: structuredContent %s: %v", tool.Name, res.StructuredContent, err)
			}
			for _, k := range spec.structured {
				if _, ok := sc[k]; !ok {
					t.Errorf("tools/call %s: structuredContent lacks %q: %s", tool.Name, k, res.StructuredContent)
				}
			}
			if len(tool.OutputSchema) == 0 {
				t.Errorf("tool %s lists no outputSchema", tool.Name)
			}
		}
		if spec.progress > 0 {
			pmu.Lock()
			got := slices.Clone(progress)
			pmu.Unlock()
			if len(got) != spec.progress || !slices.IsSorted(got) {
				t.Errorf("tools/call %s: progress notifications %v, want %d increasing", tool.Name, got, spec.progress)
			}
		}
	}
	return len(tools)
}

// schemaArgs builds arguments for an object schema: a value for every
// required property.
func schemaArgs(schema jsontext.Value) (map[string]any, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, err
	}
	args := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		name, _ := r.(string)
		ps, _ := props[name].(map[string]any)
		args[name] = schemaValue(ps, false)
	}
	return args, nil
}

// elicitFormValues fills an elicitation form: every property, defaults first.
func elicitFormValues(schema jsontext.Value) (map[string]any, error) {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("requestedSchema: %w", err)
	}
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return nil, fmt.Errorf("requestedSchema without properties: %s", schema)
	}
	out := map[string]any{}
	for name, p := range props {
		ps, _ := p.(map[string]any)
		out[name] = schemaValue(ps, true)
	}
	return out, nil
}

// schemaValue returns a plausible value for a JSON Schema: its default (when
// useDefault), its first enum or const value, or one of its type that
// respects minimum and format.
func schemaValue(s map[string]any, useDefault bool) any {
	if s == nil {
		return "test"
	}
	if d, ok := s["default"]; ok && useDefault {
		return d
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if a, ok := alts[0].(map[string]any); ok {
				return schemaValue(a, useDefault)
			}
		}
	}
	typ := s["type"]
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[0]
	}
	switch typ {
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		if m, ok := s["exclusiveMinimum"].(float64); ok {
			return m + 1
		}
		return 1.0
	case "boolean":
		return true
	case "array":
		items, _ := s["items"].(map[string]any)
		n := 1
		if m, ok := s["minItems"].(float64); ok && int(m) > n {
			n = int(m)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = schemaValue(items, false)
		}
		return out
	case "object":
		obj, _ := schemaMapArgs(s)
		return obj
	case "null":
		return nil
	}
	switch s["format"] {
	case "uri", "url":
		return "https://example.com/ferry"
	case "email":
		return "ferry@example.com"
	case "date":
		return "2000-01-02"
	case "date-time":
		return "2000-01-02T03:04:05Z"
	}
	return "test"
}

func schemaMapArgs(s map[string]any) (map[string]any, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return schemaArgs(raw)
}

// everythingPromptArgs builds a prompt's arguments: the overrides, or "test" for
// each argument.
func everythingPromptArgs(p protocol.Prompt) map[string]string {
	if a, ok := everythingPrompts[p.Name]; ok {
		return a
	}
	if len(p.Arguments) == 0 {
		return nil
	}
	args := map[string]string{}
	for _, a := range p.Arguments {
		args[a.Name] = "test"
	}
	return args
}

var uriTemplateVar = regexp.MustCompile(`\{[^}]*\}`)

// fillURITemplate fills every variable of a URI template with v.
func fillURITemplate(tpl, v string) string { return uriTemplateVar.ReplaceAllString(tpl, v) }

func checkResourceContents(t *testing.T, uri string, res *protocol.ReadResourceResult) {
	t.Helper()
	if len(res.Contents) == 0 {
		t.Errorf("resources/read %s: no contents", uri)
		return
	}
	for _, rc := range res.Contents {
		if rc.URI == "" || (rc.Text == "" && rc.Blob == "") {
			t.Errorf("resources/read %s: empty contents %+v", uri, rc)
		}
		if rc.Blob != "" {
			if _, err := base64.StdEncoding.DecodeString(rc.Blob); err != nil {
				t.Errorf("resources/read %s: blob is not base64: %v", uri, err)
			}
		}
	}
}

func joinContentText(cs []protocol.Content) string {
	var b strings.Builder
	for _, c := range cs {
		switch c.Type {
		case protocol.ContentText:
			b.WriteString(c.Text)
		case protocol.ContentResourceLink:
			b.WriteString(c.URI)
		case protocol.ContentResource:
			if c.Resource != nil {
				b.WriteString(c.Resource.URI)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// awaitEvent runs wait with a channel that fires after d, and fails the
// test if it reports false.
func awaitEvent(t *testing.T, d time.Duration, what string, wait func(deadline <-chan time.Time) bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	if !wait(timer.C) {
		t.Errorf("no %s within %v", what, d)
	}
}

// slogRecorder is a slog handler that keeps the records, for tests to look
// at what the client logged.
type slogRecorder struct {
	mu   sync.Mutex
	recs []map[string]any
}

func (h *slogRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *slogRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *slogRecorder) WithGroup(string) slog.Handler            { return h }
func (h *slogRecorder) Handle(_ context.Context, r slog.Record) error {
	m := map[string]any{"msg": r.Message}
	r.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.Any(); return true })
	h.mu.Lock()
	h.recs = append(h.recs, m)
	h.mu.Unlock()
	return nil
}

func (h *slogRecorder) find(substr string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.recs {
		if strings.Contains(r["msg"].(string), substr) {
			out = append(out, r)
		}
	}
	return out
}

func (h *slogRecorder) count(substr string) int { return len(h.find(substr)) }

func (h *slogRecorder) all() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.recs)
}
