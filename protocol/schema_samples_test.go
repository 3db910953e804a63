package protocol

import (
	"fmt"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// sampleKind says how a sample goes on the wire.
type sampleKind int

const (
	sObject       sampleKind = iota // a bare object (content block, tool...)
	sRequest                        // the params of a request
	sNotification                   // the params of a notification
	sInputRequest                   // the params of a 2026-07-28 input request ({method, params}, no envelope)
	sResult                         // a result
	sError                          // the data of an error response (nil: none)
)

// sample is one Go value the schema tests marshal, frame, validate and
// decode back.
type sample struct {
	name   string
	def    string // the definition it must satisfy
	kind   sampleKind
	method string // requests and notifications
	code   int64  // errors
	value  any    // a pointer to the Go value, or nil
	// full: the value sets every property its definition declares, so the
	// marshalled JSON must show them all (a custom marshaller must not
	// drop any).
	full bool
	// response names the 2026-07-28 *ResultResponse definition of a
	// result's envelope when it is not def+"Response".
	response string
}

const (
	full    = true
	partial = false
)

// sampleBuilder collects the samples of one revision.
type sampleBuilder struct {
	rev  string
	list []sample
}

func (b *sampleBuilder) at(min string) bool { return b.rev >= min }
func (b *sampleBuilder) stateless() bool    { return IsStateless(b.rev) }
func (b *sampleBuilder) only(rev string) bool {
	return b.rev == rev
}

func (b *sampleBuilder) obj(name, def string, v any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sObject, value: v, full: f})
}

func (b *sampleBuilder) req(name, def, method string, params any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sRequest, method: method, value: params, full: f})
}

// serverReq adds a request the server sends: a JSON-RPC request before
// 2026-07-28, an input request of an InputRequiredResult since.
func (b *sampleBuilder) serverReq(name, def, method string, params any, f bool) {
	k := sRequest
	if b.stateless() {
		k = sInputRequest
	}
	b.list = append(b.list, sample{name: name, def: def, kind: k, method: method, value: params, full: f})
}

func (b *sampleBuilder) note(name, def, method string, params any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sNotification, method: method, value: params, full: f})
}

func (b *sampleBuilder) result(name, def string, v any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sResult, value: v, full: f})
}

// clientResult adds the client's answer to a server request: a JSON-RPC
// result before 2026-07-28, an input response (a member of a retried
// request's inputResponses, no envelope) since.
func (b *sampleBuilder) clientResult(name, def string, v any, f bool) {
	k := sResult
	if b.stateless() {
		k = sObject
	}
	b.list = append(b.list, sample{name: name, def: def, kind: k, value: v, full: f})
}

func (b *sampleBuilder) resultVia(name, def, response string, v any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sResult, value: v, full: f, response: response})
}

func (b *sampleBuilder) err(name, def string, code int64, data any, f bool) {
	b.list = append(b.list, sample{name: name, def: def, kind: sError, code: code, value: data, full: f})
}

func ptr[T any](v T) *T { return &v }

// mustRaw marshals v for a raw JSON member of a sample.
func mustRaw(v any) jsontext.Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// --- building blocks, each as complete as its revision allows ---

func (b *sampleBuilder) icons() []Icon {
	return []Icon{{Src: "https://example.com/icon-48.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "light"}}
}

func (b *sampleBuilder) impl() Implementation {
	im := Implementation{Name: "ferry-example", Version: "1.2.3"}
	if b.at(Version20250618) {
		im.Title = "Ferry Example"
	}
	if b.at(Version20251125) {
		im.Description = "An example implementation."
		im.Icons = b.icons()
		im.WebsiteURL = "https://example.com/ferry"
	}
	return im
}

func (b *sampleBuilder) annotations() *Annotations {
	a := &Annotations{Audience: []Role{RoleUser, RoleAssistant}, Priority: 0.5}
	if b.at(Version20250618) {
		a.LastModified = "2025-01-12T15:00:58Z"
	}
	return a
}

// objMeta is the _meta of protocol objects, which have one from
// 2025-06-18.
func (b *sampleBuilder) objMeta() Meta {
	if b.at(Version20250618) {
		return Meta{"com.example/origin": "sample"}
	}
	return nil
}

func (b *sampleBuilder) clientCaps() ClientCapabilities {
	c := ClientCapabilities{
		Experimental: map[string]any{"com.example/feature": map[string]any{"level": 2}},
		Roots:        &RootsCapability{ListChanged: !b.stateless()},
		Sampling:     &SamplingCapability{},
	}
	if b.at(Version20250618) {
		c.Elicitation = &ElicitationCapability{}
	}
	if b.at(Version20251125) {
		c.Sampling = &SamplingCapability{Context: map[string]any{}, Tools: map[string]any{}}
		c.Elicitation = &ElicitationCapability{Form: map[string]any{}, URL: map[string]any{}}
	}
	if b.only(Version20251125) {
		c.Tasks = &ClientTasksCapability{List: map[string]any{}, Cancel: map[string]any{},
			Requests: map[string]any{"sampling": map[string]any{"createMessage": map[string]any{}}, "elicitation": map[string]any{"create": map[string]any{}}}}
	}
	if b.stateless() {
		c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	return c
}

func (b *sampleBuilder) serverCaps() ServerCapabilities {
	c := ServerCapabilities{
		Experimental: map[string]any{"com.example/feature": map[string]any{}},
		Logging:      &LoggingCapability{},
		Prompts:      &PromptsCapability{ListChanged: true},
		Resources:    &ResourcesCapability{Subscribe: true, ListChanged: true},
		Tools:        &ToolsCapability{ListChanged: true},
	}
	if b.at(Version20250326) {
		c.Completions = &CompletionsCapability{}
	}
	if b.only(Version20251125) {
		c.Tasks = &ServerTasksCapability{List: map[string]any{}, Cancel: map[string]any{},
			Requests: map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
	if b.stateless() {
		c.Extensions = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	return c
}

// reqMeta is the _meta of a request: the per-request protocol fields in
// the stateless era, nothing before.
func (b *sampleBuilder) reqMeta() Meta {
	if !b.stateless() {
		return nil
	}
	return Meta{
		MetaProtocolVersion:    b.rev,
		MetaClientCapabilities: ClientCapabilities{},
		MetaClientInfo:         b.impl(),
	}
}

// reqMetaFull adds the optional members: a progress token, and the log
// level in the stateless era.
func (b *sampleBuilder) reqMetaFull() Meta {
	if !b.stateless() {
		return Meta{MetaProgressToken: "progress-1"}
	}
	m := b.reqMeta()
	m[MetaClientCapabilities] = b.clientCaps()
	m[MetaLogLevel] = LevelInfo
	m[MetaProgressToken] = 7
	return m
}

// res is the common part of a result: resultType and serverInfo in the
// stateless era, some _meta before.
func (b *sampleBuilder) res() ResultFields {
	if b.stateless() {
		return ResultFields{ResultType: ResultComplete, Meta: Meta{MetaServerInfo: b.impl()}}
	}
	return ResultFields{Meta: Meta{"com.example/request": "r-1"}}
}

// cache is the caching hints of a cacheable result (stateless only).
func (b *sampleBuilder) cache() CacheFields {
	if b.stateless() {
		return CacheFields{TTLMs: ptr[int64](60000), CacheScope: CachePublic}
	}
	return CacheFields{}
}

// noteMeta is the _meta of a notification sent on a subscription stream.
func (b *sampleBuilder) noteMeta() Meta {
	if b.stateless() {
		return Meta{MetaSubscriptionID: 1}
	}
	return nil
}

func (b *sampleBuilder) tool() Tool {
	t := Tool{
		Name:        "get_weather",
		Description: "Current weather of a city.",
		InputSchema: jsontext.Value(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
	if b.at(Version20250326) {
		t.Annotations = &ToolAnnotations{Title: "Weather", ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(true)}
	}
	if b.at(Version20250618) {
		t.Title = "Weather"
		t.OutputSchema = jsontext.Value(`{"type":"object","properties":{"temperature":{"type":"number"}},"required":["temperature"]}`)
		t.Meta = b.objMeta()
	}
	if b.at(Version20251125) {
		t.Icons = b.icons()
	}
	if b.only(Version20251125) {
		t.Execution = &ToolExecution{TaskSupport: "optional"}
	}
	return t
}

func (b *sampleBuilder) resource() Resource {
	r := Resource{URI: "file:///project/README.md", Name: "README.md", Description: "The project's README.",
		MIMEType: "text/markdown", Size: 1024, Annotations: b.annotations()}
	if b.at(Version20250618) {
		r.Title = "Project README"
		r.Meta = b.objMeta()
	}
	if b.at(Version20251125) {
		r.Icons = b.icons()
	}
	return r
}

func (b *sampleBuilder) template() ResourceTemplate {
	r := ResourceTemplate{URITemplate: "file:///project/{path}", Name: "project-files", Description: "Files of the project.",
		MIMEType: "text/plain", Annotations: b.annotations()}
	if b.at(Version20250618) {
		r.Title = "Project files"
		r.Meta = b.objMeta()
	}
	if b.at(Version20251125) {
		r.Icons = b.icons()
	}
	return r
}

func (b *sampleBuilder) textContents() ResourceContents {
	return ResourceContents{URI: "file:///project/README.md", MIMEType: "text/markdown", Text: "# Project", Meta: b.objMeta()}
}

func (b *sampleBuilder) blobContents() ResourceContents {
	return ResourceContents{URI: "file:///project/logo.png", MIMEType: "image/png", Blob: "iVBORw0KGgo=", Meta: b.objMeta()}
}

// Content blocks of every kind the revision has, each with everything set.

func (b *sampleBuilder) text() Content {
	c := TextContent("It is 18°C in Paris.")
	c.Annotations, c.Meta = b.annotations(), b.objMeta()
	return c
}

func (b *sampleBuilder) image() Content {
	c := ImageContent([]byte("\x89PNG\r\n"), "image/png")
	c.Annotations, c.Meta = b.annotations(), b.objMeta()
	return c
}

func (b *sampleBuilder) audio() Content {
	c := AudioContent([]byte("RIFF...."), "audio/wav")
	c.Annotations, c.Meta = b.annotations(), b.objMeta()
	return c
}

func (b *sampleBuilder) link() Content { return ResourceLinkContent(b.resource()) }

func (b *sampleBuilder) embedded(rc ResourceContents) Content {
	c := EmbeddedResourceContent(rc)
	c.Annotations, c.Meta = b.annotations(), b.objMeta()
	return c
}

func (b *sampleBuilder) toolUse() Content {
	return Content{Type: ContentToolUse, ID: "call_1", Name: "get_weather", Input: map[string]any{"city": "Paris"}, Meta: b.objMeta()}
}

func (b *sampleBuilder) toolResult() Content {
	return Content{Type: ContentToolResult, ToolUseID: "call_1", Content: []Content{TextContent("18°C")},
		StructuredContent: jsontext.Value(`{"temperature":18}`), IsError: true, Meta: b.objMeta()}
}

// blocks returns one content block of every kind of the ContentBlock
// union (PromptMessage, CallToolResult) of the revision.
func (b *sampleBuilder) blocks() []Content {
	out := []Content{b.text(), b.image()}
	if b.at(Version20250326) {
		out = append(out, b.audio())
	}
	if b.at(Version20250618) {
		out = append(out, b.link())
	}
	return append(out, b.embedded(b.textContents()), b.embedded(b.blobContents()))
}

func (b *sampleBuilder) task(status string) Task {
	return Task{TaskID: "task-786512e2", Status: status, StatusMessage: "The operation is in progress.",
		CreatedAt: "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:40:00Z", TTL: ptr[int64](60000), PollInterval: ptr[int64](5000)}
}

// formSchema is an elicitation form using every primitive schema kind of
// the revision.
func (b *sampleBuilder) formSchema() jsontext.Value {
	if !b.at(Version20251125) {
		return jsontext.Value(`{"type":"object","properties":{
			"name":{"type":"string","title":"Name","description":"Your name","minLength":1,"maxLength":50,"format":"email"},
			"age":{"type":"integer","title":"Age","description":"Your age","minimum":0,"maximum":150},
			"agree":{"type":"boolean","title":"Agree","description":"Do you agree?","default":false},
			"color":{"type":"string","title":"Color","description":"Pick one","enum":["red","green"],"enumNames":["Red","Green"]}
		},"required":["name"]}`)
	}
	return jsontext.Value(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"name":{"type":"string","title":"Name","description":"Your name","minLength":1,"maxLength":50,"format":"email","default":"a@example.com"},
		"ratio":{"type":"number","title":"Ratio","description":"A ratio","minimum":0,"maximum":1.5,"default":0.5},
		"agree":{"type":"boolean","title":"Agree","description":"Do you agree?","default":false},
		"size":{"type":"string","title":"Size","description":"Pick one","enum":["s","m","l"],"default":"m"},
		"color":{"type":"string","title":"Color","description":"Pick one","oneOf":[{"const":"#f00","title":"Red"},{"const":"#0f0","title":"Green"}],"default":"#f00"},
		"tags":{"type":"array","title":"Tags","description":"Pick some","minItems":1,"maxItems":2,"items":{"type":"string","enum":["a","b","c"]},"default":["a"]},
		"fruits":{"type":"array","title":"Fruits","description":"Pick some","items":{"anyOf":[{"const":"apple","title":"Apple"},{"const":"pear","title":"Pear"}]},"default":["apple"]},
		"legacy":{"type":"string","title":"Legacy","description":"Pick one","enum":["x","y"],"enumNames":["Ex","Why"],"default":"x"}
	},"required":["name","agree"]}`)
}

func (b *sampleBuilder) elicitForm() ElicitParams {
	p := ElicitParams{Message: "Please fill in the form.", RequestedSchema: b.formSchema()}
	if b.at(Version20251125) {
		p.Mode = ElicitForm
	}
	if b.only(Version20251125) {
		p.Meta = Meta{MetaProgressToken: "elicit-1"}
		p.Task = &TaskMetadata{TTL: ptr[int64](60000)}
	}
	return p
}

func (b *sampleBuilder) elicitURL() ElicitParams {
	p := ElicitParams{Mode: ElicitURL, Message: "Please sign in.", URL: "https://example.com/login?session=abc"}
	if b.only(Version20251125) {
		p.ElicitationID = "elicit-550e8400"
		p.Meta = Meta{MetaProgressToken: "elicit-2"}
		p.Task = &TaskMetadata{TTL: ptr[int64](60000)}
	}
	return p
}

func (b *sampleBuilder) elicitResult() ElicitResult {
	r := ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "a@example.com", "agree": true, "age": 30}}
	if b.at(Version20251125) {
		r.Content["tags"] = []string{"a", "b"}
	}
	if !b.stateless() {
		r.Meta = Meta{"com.example/form": "f-1"}
	}
	return r
}

func (b *sampleBuilder) createMessage() CreateMessageParams {
	p := CreateMessageParams{
		Messages:         []SamplingMessage{{Role: RoleUser, Content: SamplingContent{TextContent("What is the weather in Paris?")}}},
		ModelPreferences: &ModelPreferences{Hints: []ModelHint{{Name: "claude-3-sonnet"}}, CostPriority: ptr(0.3), SpeedPriority: ptr(0.5), IntelligencePriority: ptr(0.8)},
		SystemPrompt:     "You are a helpful assistant.",
		IncludeContext:   "thisServer",
		Temperature:      ptr(0.7),
		MaxTokens:        200,
		StopSequences:    []string{"\n\n"},
		Metadata:         map[string]any{"com.example/trace": "t-1"},
	}
	if b.at(Version20251125) {
		p.IncludeContext = "none"
		// Several blocks per message, tool use and its result (2025-11-25).
		p.Messages = append(p.Messages,
			SamplingMessage{Role: RoleAssistant, Content: SamplingContent{b.toolUse()}},
			SamplingMessage{Role: RoleUser, Content: SamplingContent{b.toolResult(), TextContent("Thanks.")}},
		)
		p.Tools = []Tool{b.tool()}
		p.ToolChoice = &ToolChoice{Mode: "auto"}
	}
	if b.only(Version20251125) {
		p.Meta = Meta{MetaProgressToken: "sample-1"}
		p.Task = &TaskMetadata{TTL: ptr[int64](30000)}
	}
	return p
}

func (b *sampleBuilder) createMessageResult() CreateMessageResult {
	return CreateMessageResult{Role: RoleAssistant, Content: SamplingContent{TextContent("It is sunny.")},
		Model: "claude-3-sonnet-20240307", StopReason: "endTurn", Meta: Meta{"com.example/usage": 42}}
}

func (b *sampleBuilder) roots() ListRootsResult {
	r := ListRootsResult{Roots: []Root{{URI: "file:///home/user/project", Name: "Project", Meta: b.objMeta()}}}
	if !b.stateless() {
		r.Meta = Meta{"com.example/roots": 1}
	}
	return r
}

// samplesFor returns the samples of one revision.
func samplesFor(rev string) []sample {
	b := &sampleBuilder{rev: rev}

	// Lifecycle: initialize (legacy) or server/discover (stateless).
	if !b.stateless() {
		b.req("initialize", "InitializeRequest", MethodInitialize, &InitializeParams{
			Meta: b.reqMetaFull(), ProtocolVersion: rev, Capabilities: b.clientCaps(), ClientInfo: b.impl()}, partial)
		b.req("initialize, empty capabilities", "InitializeRequest", MethodInitialize, &InitializeParams{
			ProtocolVersion: rev, ClientInfo: Implementation{Name: "c", Version: "0"}}, partial)
		b.result("initialize result", "InitializeResult", &InitializeResult{ResultFields: b.res(), ProtocolVersion: rev,
			Capabilities: b.serverCaps(), ServerInfo: b.impl(), Instructions: "Use the weather tool."}, full)
		b.result("initialize result, empty capabilities", "InitializeResult", &InitializeResult{ProtocolVersion: rev,
			ServerInfo: Implementation{Name: "s", Version: "0"}}, partial)
		b.note("initialized", "InitializedNotification", NotificationInitialized, nil, partial)
		b.note("initialized with params", "InitializedNotification", NotificationInitialized, &NotificationParams{Meta: Meta{"com.example/x": 1}}, partial)
		b.req("ping", "PingRequest", MethodPing, nil, partial)
		b.serverReq("ping from the server", "PingRequest", MethodPing, &RequestParams{Meta: Meta{MetaProgressToken: 3}}, partial)
		b.result("empty result", "EmptyResult", &EmptyResult{}, partial)
	} else {
		b.req("discover", "DiscoverRequest", MethodDiscover, &RequestParams{Meta: b.reqMetaFull()}, full)
		b.result("discover result", "DiscoverResult", &DiscoverResult{ResultFields: b.res(), CacheFields: b.cache(),
			SupportedVersions: []string{Version20260728, Version20251125}, Capabilities: b.serverCaps(), Instructions: "Use the weather tool."}, full)
		b.result("discover result, no capabilities", "DiscoverResult", &DiscoverResult{
			ResultFields: ResultFields{ResultType: ResultComplete}, CacheFields: CacheFields{TTLMs: ptr[int64](0), CacheScope: CachePrivate},
			SupportedVersions: []string{Version20260728}}, partial)
		b.result("empty result", "EmptyResult", &EmptyResult{ResultFields{ResultType: ResultComplete}}, partial)
		b.obj("request _meta", "RequestMetaObject", &RequestMeta{ProtocolVersion: rev, ClientInfo: ptr(b.impl()),
			ClientCapabilities: ptr(b.clientCaps()), LogLevel: LevelDebug, ProgressToken: jsontext.Value(`"p-1"`)}, full)
		b.obj("result _meta", "ResultMetaObject", &ResultMeta{ServerInfo: ptr(b.impl())}, full)
		b.obj("subscriptions/listen result _meta", "SubscriptionsListenResultMetaObject", &ResultMeta{ServerInfo: ptr(b.impl()), SubscriptionID: jsonrpc.Int64ID(1)}, full)
		b.obj("notification _meta", "NotificationMetaObject", &NotificationMeta{SubscriptionID: jsonrpc.StringID("sub-1")}, full)
	}
	b.obj("client capabilities", "ClientCapabilities", ptr(b.clientCaps()), full)
	b.obj("client capabilities, empty", "ClientCapabilities", &ClientCapabilities{}, partial)
	b.obj("server capabilities", "ServerCapabilities", ptr(b.serverCaps()), full)
	b.obj("server capabilities, empty", "ServerCapabilities", &ServerCapabilities{}, partial)
	b.obj("implementation", "Implementation", ptr(b.impl()), full)
	if b.at(Version20251125) {
		b.obj("icon", "Icon", &b.icons()[0], full)
	}
	if b.at(Version20250326) {
		b.obj("annotations", "Annotations", b.annotations(), full)
	}

	// Content blocks.
	defs := map[string]string{ContentText: "TextContent", ContentImage: "ImageContent", ContentAudio: "AudioContent",
		ContentResourceLink: "ResourceLink", ContentResource: "EmbeddedResource"}
	for i, c := range b.blocks() {
		b.obj(fmt.Sprintf("content %d %s", i, c.Type), defs[c.Type], &c, full)
	}
	b.obj("content text, empty", "TextContent", ptr(TextContent("")), partial)
	b.obj("content resource, minimal", "EmbeddedResource", ptr(EmbeddedResourceContent(ResourceContents{URI: "file:///a", Text: ""})), partial)
	if b.at(Version20250618) {
		b.obj("content resource_link, minimal", "ResourceLink", ptr(ResourceLinkContent(Resource{URI: "file:///a", Name: "a"})), partial)
	}
	if b.at(Version20251125) {
		b.obj("content tool_use", "ToolUseContent", ptr(b.toolUse()), full)
		b.obj("content tool_use, no input", "ToolUseContent", &Content{Type: ContentToolUse, ID: "c", Name: "n"}, partial)
		b.obj("content tool_result", "ToolResultContent", ptr(b.toolResult()), full)
		b.obj("content tool_result, empty", "ToolResultContent", &Content{Type: ContentToolResult, ToolUseID: "c"}, partial)
	}
	b.obj("text resource contents", "TextResourceContents", ptr(b.textContents()), full)
	b.obj("blob resource contents", "BlobResourceContents", ptr(b.blobContents()), full)

	// Tools.
	b.obj("tool", "Tool", ptr(b.tool()), full)
	b.obj("tool, minimal", "Tool", &Tool{Name: "noop", InputSchema: jsontext.Value(`{"type":"object"}`)}, partial)
	if b.at(Version20250326) {
		b.obj("tool annotations", "ToolAnnotations", b.tool().Annotations, full)
	}
	if b.only(Version20251125) {
		b.obj("tool execution", "ToolExecution", b.tool().Execution, full)
	}
	b.req("tools/list", "ListToolsRequest", MethodToolsList, &PaginatedParams{Meta: b.reqMetaFull(), Cursor: "page-2"}, full)
	if !b.stateless() {
		b.req("tools/list, no params", "ListToolsRequest", MethodToolsList, nil, partial)
	}
	b.result("tools/list result", "ListToolsResult", &ListToolsResult{ResultFields: b.res(), CacheFields: b.cache(),
		Tools: []Tool{b.tool(), {Name: "noop", InputSchema: jsontext.Value(`{"type":"object"}`)}}, NextCursor: "page-3"}, full)
	b.result("tools/list result, empty", "ListToolsResult", &ListToolsResult{ResultFields: ResultFields{ResultType: b.resultType()}, CacheFields: b.cache()}, partial)
	call := &CallToolParams{Meta: b.reqMetaFull(), Name: "get_weather", Arguments: jsontext.Value(`{"city":"Paris"}`)}
	if b.only(Version20251125) {
		call.Task = &TaskMetadata{TTL: ptr[int64](60000)}
	}
	if b.stateless() {
		call.InputResponses = map[string]jsontext.Value{
			"login":  mustRaw(b.elicitResult()),
			"sample": mustRaw(b.createMessageResult()),
			"roots":  mustRaw(b.roots()),
		}
		call.RequestState = "eyJzdGVwIjoyfQ"
	}
	b.req("tools/call", "CallToolRequest", MethodToolsCall, call, full)
	b.req("tools/call, no arguments", "CallToolRequest", MethodToolsCall, &CallToolParams{Meta: b.reqMeta(), Name: "noop"}, partial)
	callResult := &CallToolResult{ResultFields: b.res(), Content: b.blocks(), IsError: true}
	if b.at(Version20250618) {
		callResult.StructuredContent = jsontext.Value(`{"temperature":18,"unit":"C"}`)
	}
	b.result("tools/call result", "CallToolResult", callResult, full)
	b.result("tools/call result, no content", "CallToolResult", &CallToolResult{ResultFields: ResultFields{ResultType: b.resultType()}}, partial)
	if b.at(Version20250618) {
		b.result("tools/call result, empty structured object", "CallToolResult", &CallToolResult{ResultFields: b.res(),
			Content: []Content{TextContent("{}")}, StructuredContent: jsontext.Value(`{}`)}, partial)
	}
	if b.stateless() {
		// Since 2026-07-28 structured output may be any JSON value.
		for i, v := range []string{`[1,2]`, `[]`, `""`, `0`, `false`, `null`} {
			b.result(fmt.Sprintf("tools/call result, structured %d", i), "CallToolResult", &CallToolResult{ResultFields: b.res(),
				Content: []Content{TextContent(v)}, StructuredContent: jsontext.Value(v)}, partial)
		}
	}
	b.note("tools list changed", "ToolListChangedNotification", NotificationToolsListChanged, &NotificationParams{Meta: b.noteMeta()}, partial)
	if !b.stateless() {
		b.note("tools list changed, no params", "ToolListChangedNotification", NotificationToolsListChanged, nil, partial)
	}

	// Resources.
	b.obj("resource", "Resource", ptr(b.resource()), full)
	b.obj("resource template", "ResourceTemplate", ptr(b.template()), full)
	b.req("resources/list", "ListResourcesRequest", MethodResourcesList, &PaginatedParams{Meta: b.reqMetaFull(), Cursor: "c1"}, full)
	b.result("resources/list result", "ListResourcesResult", &ListResourcesResult{ResultFields: b.res(), CacheFields: b.cache(),
		Resources: []Resource{b.resource(), {URI: "https://example.com/a", Name: "a"}}, NextCursor: "c2"}, full)
	b.req("resources/templates/list", "ListResourceTemplatesRequest", MethodResourcesTemplatesList, &PaginatedParams{Meta: b.reqMetaFull(), Cursor: "c1"}, full)
	b.result("resources/templates/list result", "ListResourceTemplatesResult", &ListResourceTemplatesResult{ResultFields: b.res(), CacheFields: b.cache(),
		ResourceTemplates: []ResourceTemplate{b.template()}, NextCursor: "c2"}, full)
	read := &ReadResourceParams{Meta: b.reqMetaFull(), URI: "file:///project/README.md"}
	if b.stateless() {
		read.InputResponses = map[string]jsontext.Value{"roots": mustRaw(b.roots())}
		read.RequestState = "state-1"
	}
	b.req("resources/read", "ReadResourceRequest", MethodResourcesRead, read, full)
	b.result("resources/read result", "ReadResourceResult", &ReadResourceResult{ResultFields: b.res(), CacheFields: b.cache(),
		Contents: []ResourceContents{b.textContents(), b.blobContents(), {URI: "file:///empty"}}}, full)
	if !b.stateless() {
		b.req("resources/subscribe", "SubscribeRequest", MethodResourcesSubscribe, &SubscribeParams{Meta: b.reqMetaFull(), URI: "file:///project/README.md"}, partial)
		b.req("resources/unsubscribe", "UnsubscribeRequest", MethodResourcesUnsubscribe, &SubscribeParams{URI: "file:///project/README.md"}, partial)
	}
	b.note("resource updated", "ResourceUpdatedNotification", NotificationResourceUpdated, &ResourceUpdatedParams{Meta: b.noteMeta(), URI: "file:///project/README.md"}, partial)
	b.note("resources list changed", "ResourceListChangedNotification", NotificationResourcesListChanged, &NotificationParams{Meta: b.noteMeta()}, partial)

	// Prompts.
	prompt := Prompt{Name: "code_review", Description: "Review code.", Arguments: []PromptArgument{{Name: "code", Description: "The code.", Required: true}}}
	if b.at(Version20250618) {
		prompt.Title = "Code review"
		prompt.Arguments[0].Title = "Code"
		prompt.Meta = b.objMeta()
	}
	if b.at(Version20251125) {
		prompt.Icons = b.icons()
	}
	b.obj("prompt", "Prompt", &prompt, full)
	b.obj("prompt argument", "PromptArgument", &prompt.Arguments[0], full)
	b.req("prompts/list", "ListPromptsRequest", MethodPromptsList, &PaginatedParams{Meta: b.reqMetaFull(), Cursor: "c1"}, full)
	b.result("prompts/list result", "ListPromptsResult", &ListPromptsResult{ResultFields: b.res(), CacheFields: b.cache(),
		Prompts: []Prompt{prompt, {Name: "minimal"}}, NextCursor: "c2"}, full)
	get := &GetPromptParams{Meta: b.reqMetaFull(), Name: "code_review", Arguments: map[string]string{"code": "x := 1"}}
	if b.stateless() {
		get.InputResponses = map[string]jsontext.Value{"login": mustRaw(ElicitResult{Action: ElicitDecline})}
		get.RequestState = "state-2"
	}
	b.req("prompts/get", "GetPromptRequest", MethodPromptsGet, get, full)
	var messages []PromptMessage
	for _, c := range b.blocks() {
		messages = append(messages, PromptMessage{Role: RoleUser, Content: c})
	}
	messages = append(messages, PromptMessage{Role: RoleAssistant, Content: TextContent("")})
	b.result("prompts/get result", "GetPromptResult", &GetPromptResult{ResultFields: b.res(), Description: "A review.", Messages: messages}, full)
	b.obj("prompt message", "PromptMessage", &messages[0], full)
	b.note("prompts list changed", "PromptListChangedNotification", NotificationPromptsListChanged, &NotificationParams{Meta: b.noteMeta()}, partial)

	// Completion.
	promptRef := CompleteRef{Type: RefPrompt, Name: "code_review"}
	if b.at(Version20250618) {
		promptRef.Title = "Code review"
	}
	resourceRef := CompleteRef{Type: RefResource, URI: "file:///project/{path}"}
	resourceRefDef := "ResourceTemplateReference"
	if !b.at(Version20250618) {
		resourceRefDef = "ResourceReference"
	}
	b.obj("prompt reference", "PromptReference", &promptRef, full)
	b.obj("resource reference", resourceRefDef, &resourceRef, full)
	complete := &CompleteParams{Meta: b.reqMetaFull(), Ref: promptRef, Argument: CompleteArgument{Name: "language", Value: "py"}}
	if b.at(Version20250618) {
		complete.Context = &CompleteContext{Arguments: map[string]string{"framework": "flask"}}
	}
	b.req("completion/complete", "CompleteRequest", MethodComplete, complete, full)
	b.req("completion/complete, resource", "CompleteRequest", MethodComplete, &CompleteParams{Meta: b.reqMeta(), Ref: resourceRef, Argument: CompleteArgument{Name: "path", Value: ""}}, partial)
	b.result("completion/complete result", "CompleteResult", &CompleteResult{ResultFields: b.res(),
		Completion: Completion{Values: []string{"python", "pytorch"}, Total: ptr(10), HasMore: true}}, full)
	b.result("completion/complete result, none", "CompleteResult", &CompleteResult{ResultFields: ResultFields{ResultType: b.resultType()}}, partial)

	// Logging, progress, cancellation.
	if !b.stateless() {
		b.req("logging/setLevel", "SetLevelRequest", MethodSetLevel, &SetLevelParams{Meta: b.reqMetaFull(), Level: LevelWarning}, partial)
	}
	logMsg := &LoggingMessageParams{Level: LevelError, Logger: "db", Data: map[string]any{"error": "connection failed", "retry": 3}}
	if b.at(Version20251125) {
		logMsg.Meta = Meta{"com.example/x": true}
	}
	b.note("log message", "LoggingMessageNotification", NotificationMessage, logMsg, full)
	b.note("log message, null data", "LoggingMessageNotification", NotificationMessage, &LoggingMessageParams{Level: LevelDebug}, partial)
	progress := &ProgressParams{ProgressToken: jsontext.Value(`"progress-1"`), Progress: 50, Total: 100}
	if b.at(Version20250326) {
		progress.Message = "Halfway there"
	}
	if b.at(Version20251125) {
		progress.Meta = Meta{"com.example/x": true}
	}
	b.note("progress", "ProgressNotification", NotificationProgress, progress, full)
	b.note("progress, integer token", "ProgressNotification", NotificationProgress, &ProgressParams{ProgressToken: jsontext.Value(`7`), Progress: 0.25}, partial)
	cancelled := &CancelledParams{RequestID: jsonrpc.Int64ID(3), Reason: "User requested cancellation"}
	if b.at(Version20251125) {
		cancelled.Meta = Meta{"com.example/x": true}
	}
	b.note("cancelled", "CancelledNotification", NotificationCancelled, cancelled, full)
	b.note("cancelled, string id", "CancelledNotification", NotificationCancelled, &CancelledParams{RequestID: jsonrpc.StringID("req-9")}, partial)
	if b.only(Version20251125) {
		b.note("cancelled, no request id", "CancelledNotification", NotificationCancelled, &CancelledParams{Reason: "task cancelled"}, partial)
	}

	// Sampling (server to client; an input request since 2026-07-28).
	b.obj("model preferences", "ModelPreferences", b.createMessage().ModelPreferences, full)
	b.obj("model hint", "ModelHint", &ModelHint{Name: "claude"}, full)
	sm := SamplingMessage{Role: RoleUser, Content: SamplingContent{b.image()}}
	if b.at(Version20251125) {
		sm.Meta = b.objMeta()
		b.obj("tool choice", "ToolChoice", &ToolChoice{Mode: "required"}, full)
	}
	b.obj("sampling message", "SamplingMessage", &sm, full)
	if b.at(Version20250326) {
		b.obj("sampling message, audio", "SamplingMessage", &SamplingMessage{Role: RoleUser, Content: SamplingContent{b.audio()}}, partial)
	}
	b.serverReq("sampling/createMessage", "CreateMessageRequest", MethodCreateMessage, ptr(b.createMessage()), full)
	b.clientResult("sampling/createMessage result", "CreateMessageResult", ptr(b.createMessageResult()), full)
	if b.at(Version20251125) {
		b.clientResult("sampling/createMessage result, tool use", "CreateMessageResult", &CreateMessageResult{Role: RoleAssistant,
			Content: SamplingContent{b.toolUse(), TextContent("Let me check.")}, Model: "m", StopReason: "toolUse"}, partial)
	}

	// Elicitation (server to client).
	if b.at(Version20250618) {
		b.serverReq("elicitation/create, form", "ElicitRequest", MethodElicit, ptr(b.elicitForm()), full)
		b.clientResult("elicitation/create result, accept", "ElicitResult", ptr(b.elicitResult()), full)
		b.clientResult("elicitation/create result, decline", "ElicitResult", &ElicitResult{Action: ElicitDecline}, partial)
		b.clientResult("elicitation/create result, accept empty", "ElicitResult", &ElicitResult{Action: ElicitAccept, Content: map[string]any{}}, partial)
	}
	if b.at(Version20251125) {
		b.serverReq("elicitation/create, url", "ElicitRequest", MethodElicit, ptr(b.elicitURL()), full)
		b.obj("elicitation form params", "ElicitRequestFormParams", ptr(b.elicitForm()), full)
		b.obj("elicitation url params", "ElicitRequestURLParams", ptr(b.elicitURL()), full)
	}
	if b.only(Version20251125) {
		b.note("elicitation complete", "ElicitationCompleteNotification", NotificationElicitationComplete, &ElicitationCompleteParams{ElicitationID: "elicit-550e8400"}, full)
		b.err("URL elicitation required", "URLElicitationRequiredError", CodeURLElicitationRequired,
			&URLElicitationRequiredData{Elicitations: []ElicitParams{b.elicitURL()}}, full)
	}

	// Roots (client side).
	b.obj("root", "Root", &b.roots().Roots[0], full)
	rootsParams := &RequestParams{}
	if !b.stateless() {
		rootsParams.Meta = Meta{MetaProgressToken: "roots-1"}
	}
	b.serverReq("roots/list", "ListRootsRequest", MethodListRoots, rootsParams, partial)
	b.serverReq("roots/list, no params", "ListRootsRequest", MethodListRoots, nil, partial)
	b.clientResult("roots/list result", "ListRootsResult", ptr(b.roots()), full)
	if !b.stateless() {
		b.note("roots list changed", "RootsListChangedNotification", NotificationRootsListChanged, &NotificationParams{}, partial)
	}

	// Tasks (2025-11-25).
	if b.only(Version20251125) {
		b.obj("task", "Task", ptr(b.task(TaskWorking)), full)
		b.obj("task, unlimited", "Task", &Task{TaskID: "t", Status: TaskCompleted, CreatedAt: "2025-11-25T10:30:00Z", LastUpdatedAt: "2025-11-25T10:30:00Z"}, partial)
		b.obj("task metadata", "TaskMetadata", &TaskMetadata{TTL: ptr[int64](1000)}, full)
		b.obj("related task", "RelatedTaskMetadata", &RelatedTaskMetadata{TaskID: "t"}, full)
		b.result("create task result", "CreateTaskResult", &CreateTaskResult{ResultFields: b.res(), Task: b.task(TaskWorking)}, full)
		b.req("tasks/get", "GetTaskRequest", MethodTasksGet, &TaskIDParams{TaskID: "task-786512e2"}, full)
		b.result("tasks/get result", "GetTaskResult", &GetTaskResult{ResultFields: b.res(), Task: b.task(TaskInputRequired)}, full)
		b.req("tasks/result", "GetTaskPayloadRequest", MethodTasksResult, &TaskIDParams{TaskID: "task-786512e2"}, full)
		b.result("tasks/result result", "GetTaskPayloadResult", &CallToolResult{ResultFields: ResultFields{
			Meta: Meta{MetaRelatedTask: RelatedTaskMetadata{TaskID: "task-786512e2"}}}, Content: []Content{TextContent("done")}}, partial)
		b.req("tasks/list", "ListTasksRequest", MethodTasksList, &PaginatedParams{Cursor: "c1"}, partial)
		b.result("tasks/list result", "ListTasksResult", &ListTasksResult{ResultFields: b.res(), Tasks: []Task{b.task(TaskCompleted)}, NextCursor: "c2"}, full)
		b.req("tasks/cancel", "CancelTaskRequest", MethodTasksCancel, &TaskIDParams{TaskID: "task-786512e2"}, full)
		b.result("tasks/cancel result", "CancelTaskResult", &GetTaskResult{Task: b.task(TaskCancelled)}, partial)
		b.note("task status", "TaskStatusNotification", NotificationTaskStatus, &TaskStatusParams{Meta: Meta{"com.example/x": 1}, Task: b.task(TaskFailed)}, full)
	}

	// Subscriptions and multi round-trip requests (2026-07-28).
	if b.stateless() {
		filter := SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: []string{"file:///project/README.md"}}
		b.obj("subscription filter", "SubscriptionFilter", &filter, full)
		b.req("subscriptions/listen", "SubscriptionsListenRequest", MethodSubscriptionsListen, &SubscriptionsListenParams{Meta: b.reqMetaFull(), Notifications: filter}, full)
		b.req("subscriptions/listen, nothing", "SubscriptionsListenRequest", MethodSubscriptionsListen, &SubscriptionsListenParams{Meta: b.reqMeta()}, partial)
		b.note("subscriptions acknowledged", "SubscriptionsAcknowledgedNotification", NotificationSubscriptionsAcknowledged,
			&SubscriptionsAcknowledgedParams{Meta: b.noteMeta(), Notifications: filter}, full)
		b.result("subscriptions/listen result", "SubscriptionsListenResult", &SubscriptionsListenResult{ResultFields{ResultType: ResultComplete,
			Meta: Meta{MetaServerInfo: b.impl(), MetaSubscriptionID: 1}}}, full)

		inputRequired := &InputRequiredResult{
			ResultFields: ResultFields{ResultType: ResultInputRequired, Meta: Meta{MetaServerInfo: b.impl()}},
			InputRequests: map[string]InputRequest{
				"login":  {Method: MethodElicit, Params: mustRaw(b.elicitForm())},
				"signin": {Method: MethodElicit, Params: mustRaw(b.elicitURL())},
				"sample": {Method: MethodCreateMessage, Params: mustRaw(b.createMessage())},
				"roots":  {Method: MethodListRoots},
			},
			RequestState: "eyJzdGVwIjoxfQ",
		}
		b.resultVia("tools/call input required", "InputRequiredResult", "CallToolResultResponse", inputRequired, full)
		b.resultVia("prompts/get input required", "InputRequiredResult", "GetPromptResultResponse",
			&InputRequiredResult{ResultFields: ResultFields{ResultType: ResultInputRequired}, RequestState: "s"}, partial)
		b.resultVia("resources/read input required", "InputRequiredResult", "ReadResourceResultResponse",
			&InputRequiredResult{ResultFields: ResultFields{ResultType: ResultInputRequired},
				InputRequests: map[string]InputRequest{"roots": {Method: MethodListRoots, Params: jsontext.Value(`{}`)}}}, partial)
		b.obj("input request", "InputRequest", ptr(inputRequired.InputRequests["sample"]), full)
		b.obj("input response params", "InputResponseRequestParams", &InputResponseParams{Meta: b.reqMeta(),
			MRTRParams: MRTRParams{InputResponses: call.InputResponses, RequestState: "s"}}, full)

		// Errors.
		b.err("unsupported protocol version", "UnsupportedProtocolVersionError", CodeUnsupportedProtocolVersion,
			&UnsupportedProtocolVersionData{Supported: []string{Version20260728, Version20251125}, Requested: "2099-01-01"}, full)
		b.err("missing client capability", "MissingRequiredClientCapabilityError", CodeMissingRequiredClientCapability,
			&MissingRequiredClientCapabilityData{RequiredCapabilities: ClientCapabilities{Elicitation: &ElicitationCapability{URL: map[string]any{}}}}, full)
		b.err("header mismatch", "HeaderMismatchError", CodeHeaderMismatch, nil, partial)
		b.err("parse error", "ParseError", jsonrpc.CodeParseError, nil, partial)
		b.err("invalid request", "InvalidRequestError", jsonrpc.CodeInvalidRequest, nil, partial)
		b.err("method not found", "MethodNotFoundError", jsonrpc.CodeMethodNotFound, nil, partial)
		b.err("invalid params, resource not found", "InvalidParamsError", jsonrpc.CodeInvalidParams, &map[string]any{"uri": "file:///nope"}, full)
		b.err("internal error", "InternalError", jsonrpc.CodeInternalError, &map[string]any{"detail": "boom"}, full)
	} else {
		errDef := "JSONRPCError"
		if b.at(Version20251125) {
			errDef = "JSONRPCErrorResponse"
		}
		b.err("resource not found", errDef, CodeResourceNotFound, &map[string]any{"uri": "file:///nope"}, partial)
		b.err("method not found", errDef, jsonrpc.CodeMethodNotFound, nil, partial)
	}
	return b.list
}

// resultType is what a minimal result of the revision sets.
func (b *sampleBuilder) resultType() string {
	if b.stateless() {
		return ResultComplete
	}
	return ""
}
