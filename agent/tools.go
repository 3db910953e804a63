package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/host"
	"github.com/ferrymcp/ferry/protocol"
)

// toolSet is the tools of one step: what the model is told and how its
// names lead back to the host's tools.
type toolSet struct {
	specs  []ToolSpec
	names  *Names
	byName map[string]*host.Tool // by the host's name
	// skills is the catalog behind the skill tools; nil when they are
	// not offered.
	skills *skillCatalog
	// builtins are the agent's own read-only tools offered this step (of
	// kept results, of tool search), by name: they run without asking.
	builtins map[string]builtinTool
}

// builtinTool runs a call of one of the agent's own tools.
type builtinTool func(ctx context.Context, args jsontext.Value) (*protocol.CallToolResult, error)

// addBuiltin offers one of the agent's own tools.
func (ts *toolSet) addBuiltin(spec ToolSpec, run builtinTool) {
	if ts.builtins == nil {
		ts.builtins = map[string]builtinTool{}
	}
	ts.builtins[spec.Name] = run
	ts.specs = append(ts.specs, spec)
}

// toolState is what the agent remembers between steps: the last list,
// to report changes, and the warnings already given.
type toolState struct {
	mu        sync.Mutex
	listed    bool
	last      []string
	warned    map[string]bool
	schemaTok int
	// loaded are the tools the model loaded through tool search, by the
	// host's name: their definitions are sent from then on.
	loaded map[string]bool
}

// listTools lists the tools for a step, reporting changes since the last
// step and warnings (servers that failed to list, tools left out for
// their size, schemas that crowd the context).
func (a *Agent) listTools(ctx context.Context, lim Limits) *toolSet {
	ts := &toolSet{names: NewNames(nil), byName: map[string]*host.Tool{}}
	if a.Tools == nil {
		a.addSkillTools(ctx, ts, lim)
		a.addResultTool(ts, lim)
		return ts
	}
	list, err := a.Tools.Tools(ctx)
	if err != nil && ctx.Err() == nil {
		a.warnOnce("tools:"+err.Error(), "some servers' tools are not available: "+err.Error())
	}
	names := make([]string, len(list))
	for i := range list {
		names[i] = list[i].Name
	}
	ts.names = NewNames(names)
	fit := newToolFit(lim)
	size := 0
	for i := range list {
		t := &list[i]
		spec := ToolSpec{Name: ts.names.Model(t.Name), Description: describe(&t.Tool), Schema: schemaForModel(t.Tool.InputSchema)}
		n := len(spec.Name) + len(spec.Description) + len(spec.Schema)
		if !fit.take(t, n) {
			continue
		}
		size += n
		ts.byName[t.Name] = t
		ts.specs = append(ts.specs, spec)
	}
	for _, w := range fit.warnings() {
		a.warnOnce("fit:"+w, w)
	}
	a.noteChanges(names)
	if a.searchTools(ts, size, lim) {
		size = specsSize(ts.specs)
	}
	a.checkSchemaSize(size, len(ts.specs), lim.ContextTokens)
	a.addSkillTools(ctx, ts, lim)
	a.addResultTool(ts, lim)
	return ts
}

// toolFit keeps the tool definitions within the limits, in the servers'
// order: a tool larger than the limit of a tool, or than what is left of
// its server's, is left out, and the smaller ones after it still fit.
type toolFit struct {
	lim     Limits
	used    map[string]int      // bytes by server
	tooBig  []string            // tools over the limit of a tool
	crowded map[string][]string // tools left out, by server
	servers []string            // servers with tools left out, in order
}

func newToolFit(lim Limits) *toolFit {
	return &toolFit{lim: lim, used: map[string]int{}, crowded: map[string][]string{}}
}

// take says whether a tool whose definition takes n bytes fits.
func (f *toolFit) take(t *host.Tool, n int) bool {
	if f.lim.MaxToolBytes > 0 && n > f.lim.MaxToolBytes {
		f.tooBig = append(f.tooBig, fmt.Sprintf("%s (%d bytes)", t.Name, n))
		return false
	}
	if f.lim.MaxServerToolBytes > 0 && f.used[t.Server]+n > f.lim.MaxServerToolBytes {
		if len(f.crowded[t.Server]) == 0 {
			f.servers = append(f.servers, t.Server)
		}
		f.crowded[t.Server] = append(f.crowded[t.Server], t.Name)
		return false
	}
	f.used[t.Server] += n
	return true
}

// warnings are the notes on what was left out.
func (f *toolFit) warnings() []string {
	var out []string
	if len(f.tooBig) > 0 {
		out = append(out, fmt.Sprintf("%d tools are left out: each one's name, description and schema take more than %d bytes "+
			"(the limit of a tool, maxToolBytes in the agent settings): %s", len(f.tooBig), f.lim.MaxToolBytes, nameList(f.tooBig)))
	}
	for _, s := range f.servers {
		left := f.crowded[s]
		out = append(out, fmt.Sprintf("%d tools of server %q are left out: its tools' names, descriptions and schemas "+
			"would take more than %d bytes (the limit of a server, maxServerToolBytes in the agent settings; "+
			"or allow fewer tools, allowedTools in its configuration): %s", len(left), s, f.lim.MaxServerToolBytes, nameList(left)))
	}
	return out
}

// nameList is the first few names, and how many more there are.
func nameList(names []string) string {
	const shown = 8
	if len(names) <= shown {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:shown], ", "), len(names)-shown)
}

// describe is the description the model gets: the tool's, or its title.
func describe(t *protocol.Tool) string {
	if t.Description != "" {
		return t.Description
	}
	if t.Title != "" {
		return t.Title
	}
	if t.Annotations != nil {
		return t.Annotations.Title
	}
	return ""
}

// schemaForModel makes an input schema fit for the providers: an object
// schema ("type":"object" present), without "$schema" (some compatible
// endpoints reject it).
func schemaForModel(raw jsontext.Value) jsontext.Value {
	var m map[string]jsontext.Value
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return jsontext.Value(`{"type":"object","properties":{}}`)
	}
	_, hasSchema := m["$schema"]
	_, hasType := m["type"]
	if !hasSchema && hasType {
		return raw
	}
	delete(m, "$schema")
	if !hasType {
		m["type"] = jsontext.Value(`"object"`)
	}
	out, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return raw
	}
	return out
}

func (a *Agent) noteChanges(names []string) {
	st := &a.state
	st.mu.Lock()
	sorted := slices.Sorted(slices.Values(names))
	prev, listed := st.last, st.listed
	st.last, st.listed = sorted, true
	st.mu.Unlock()
	if !listed || slices.Equal(prev, sorted) {
		return
	}
	var added, removed []string
	for _, n := range sorted {
		if _, ok := slices.BinarySearch(prev, n); !ok {
			added = append(added, n)
		}
	}
	for _, n := range prev {
		if _, ok := slices.BinarySearch(sorted, n); !ok {
			removed = append(removed, n)
		}
	}
	a.emit(Event{Kind: EventToolsChanged, Added: added, Removed: removed})
}

// schemaShare is the share of the context window the tool schemas may
// take before the agent warns.
const schemaShare = 4 // a quarter

// checkSchemaSize warns when the tools' names, descriptions and schemas
// (about four bytes a token) take more than a quarter of the context.
func (a *Agent) checkSchemaSize(bytes, n, contextTokens int) {
	tokens := bytes / 4
	st := &a.state
	st.mu.Lock()
	same := st.schemaTok == tokens
	st.schemaTok = tokens
	st.mu.Unlock()
	if same || tokens*schemaShare <= contextTokens {
		return
	}
	a.emit(Event{Kind: EventWarning, Text: fmt.Sprintf(
		"the %d tools' descriptions and schemas take about %d tokens, %d%% of the model's context of %d; "+
			"allow fewer tools (allowedTools in the configuration, or the agent's deny list)",
		n, tokens, tokens*100/contextTokens, contextTokens)})
}

func (a *Agent) warnOnce(key, text string) {
	st := &a.state
	st.mu.Lock()
	if st.warned == nil {
		st.warned = map[string]bool{}
	}
	seen := st.warned[key]
	st.warned[key] = true
	st.mu.Unlock()
	if !seen {
		a.emit(Event{Kind: EventWarning, Text: text})
	}
}

// pending is a call on its way: its record, what it runs once approved
// (a host tool's call, or a skill tool's), and its result.
type pending struct {
	call   *ToolCall
	rec    *CallRecord
	run    func(ctx context.Context) (*protocol.CallToolResult, error)
	args   jsontext.Value
	result ToolResult
}

// runCalls answers every call of a reply: the ones that cannot run
// (unknown tool, invalid arguments, denied) at once with an error, the
// others all at the same time. The results come back in the calls'
// order, one per call, whatever happened (a cancelled call gets one
// saying so).
func (a *Agent) runCalls(ctx context.Context, calls []*ToolCall, ts *toolSet, lim Limits, res *Result) []Part {
	ps := make([]*pending, len(calls))
	for i, c := range calls {
		p := &pending{call: c, rec: &CallRecord{ID: c.ID, Name: c.Name, Arguments: argumentsJSON(c.Arguments)}}
		p.result = ToolResult{CallID: c.ID, Name: c.Name}
		ps[i] = p
		res.Calls = append(res.Calls, p.rec)
		a.prepare(ctx, p, ts)
	}
	var wg sync.WaitGroup
	for _, p := range ps {
		if p.run == nil {
			continue
		}
		wg.Go(func() { a.call(ctx, p, lim) })
	}
	wg.Wait()
	parts := make([]Part, len(ps))
	for i, p := range ps {
		r := p.result
		parts[i] = Part{Type: ToolResultPart, Result: &r}
	}
	return parts
}

// prepare resolves a call's tool, checks its arguments and asks for
// approval, reporting each stage; a call that may not run gets its error
// result here, and its end event.
func (a *Agent) prepare(ctx context.Context, p *pending, ts *toolSet) {
	a.emit(Event{Kind: EventToolAsked, Call: p.rec})
	fail := func(msg string) { a.failCall(p, msg) }
	name, ok := ts.names.Tool(p.call.Name)
	t := ts.byName[name]
	skill := ts.skills != nil && isSkillTool(p.call.Name)
	builtin := ts.builtins[p.call.Name]
	if (!ok || t == nil) && !skill && builtin == nil {
		fail(fmt.Sprintf("Error: there is no tool named %q.", p.call.Name))
		return
	}
	if !skill && builtin == nil {
		p.rec.Name, p.rec.Server, p.rec.Tool = t.Name, t.Server, t.Tool.Name
	}
	args, ok := objectArgs(p.call.Arguments)
	if !ok {
		fail(fmt.Sprintf("Error: the arguments of this call are not a JSON object (%s); nothing was run. "+
			"Call the tool again with a JSON object of its parameters.", argsProblem(p.call.Arguments)))
		return
	}
	p.args = args
	if ctx.Err() != nil {
		fail("Error: not run: the turn was cancelled.")
		return
	}
	if skill {
		a.prepareSkill(ctx, p, ts.skills)
		return
	}
	if builtin != nil { // read-only: nothing to approve
		a.emit(Event{Kind: EventToolApproved, Call: p.rec})
		p.run = func(ctx context.Context) (*protocol.CallToolResult, error) { return builtin(ctx, args) }
		return
	}
	if v := a.Policy.decideTool(ctx, t, args); !v.ok {
		p.rec.Denied, p.rec.Unasked = true, v.unasked
		fail(v.reason)
		return
	}
	a.emit(Event{Kind: EventToolApproved, Call: p.rec})
	p.run = func(ctx context.Context) (*protocol.CallToolResult, error) { return a.Tools.Call(ctx, t.Name, args) }
}

// failCall answers a call that may not run with an error result, and
// reports its end.
func (a *Agent) failCall(p *pending, msg string) {
	p.run = nil
	p.rec.Error, p.rec.IsError = msg, true
	p.rec.Started = time.Now()
	p.result.Content = []Part{Text(msg)}
	p.result.IsError = true
	p.rec.Result = msg
	if p.rec.Denied {
		a.emit(Event{Kind: EventToolDenied, Call: p.rec})
	}
	a.emit(Event{Kind: EventToolEnd, Call: p.rec})
}

// argsProblem says what is wrong with arguments that are not an object.
func argsProblem(raw string) string {
	v := jsontext.Value(raw)
	if v.IsValid() {
		return "a JSON " + kindName(v.Kind()) + " was given"
	}
	var x any
	err := json.Unmarshal(v, &x)
	short := raw
	if len(short) > 200 {
		short = truncate(short, 200) + "…"
	}
	if err == nil {
		return fmt.Sprintf("invalid JSON: %q", short)
	}
	return fmt.Sprintf("invalid JSON: %v: %q", err, short)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '[':
		return "array"
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "value"
}

// call runs an approved call and records its result.
func (a *Agent) call(ctx context.Context, p *pending, lim Limits) {
	p.rec.Started = time.Now()
	a.emit(Event{Kind: EventToolStart, Call: p.rec})
	cctx := client.WithProgress(ctx, func(pp *protocol.ProgressParams) {
		a.emit(Event{Kind: EventToolProgress, Call: p.rec, Progress: pp})
	})
	out, err := p.run(cctx)
	p.rec.Duration = time.Since(p.rec.Started)
	p.rec.Millis = p.rec.Duration.Milliseconds()
	switch {
	case err != nil && ctx.Err() != nil:
		msg := "Error: the call was cancelled by the user before it finished."
		if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			msg = "Error: the call was cancelled: " + cause.Error()
		}
		p.rec.Error, p.rec.IsError = msg, true
		p.result.Content, p.result.IsError = []Part{Text(msg)}, true
	case err != nil:
		msg := "Error: " + err.Error()
		p.rec.Error, p.rec.IsError = msg, true
		p.result.Content, p.result.IsError = []Part{Text(msg)}, true
	default:
		parts, cut, kept := a.fitResult(p.rec, toolResult(out, lim.MaxImageBytes), lim.resultTokens(p.rec))
		p.result.Content, p.result.IsError = parts, out.IsError
		p.rec.Cut, p.rec.Kept, p.rec.IsError = cut, kept, out.IsError
		if out.IsError {
			p.rec.Error = summary(parts, 200)
		}
	}
	p.rec.Result = summary(p.result.Content, 200)
	a.emit(Event{Kind: EventToolEnd, Call: p.rec})
}
