package protocol

import (
	"reflect"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/go-json-experiment/json/jsontext"
)

// cpKind says how a schema definition maps onto its Go counterpart.
type cpKind int

const (
	// cpDirect: an object (or a union of objects) whose properties are the
	// JSON members of each of the Go types.
	cpDirect cpKind = iota
	// cpRequest, cpNotification: a request or notification definition
	// (a JSON-RPC envelope from 2025-11-25, method and params before);
	// jsonrpc.Message carries it and the params are the Go type.
	cpRequest
	cpNotification
	// cpResponse: a result envelope (2026-07-28 *ResultResponse); the
	// result is one of the Go types.
	cpResponse
	// cpErrorEnvelope: an error response whose error.data is the Go type
	// (no type: no data).
	cpErrorEnvelope
	// cpErrorObject: a JSON-RPC error object with a fixed code
	// (2026-07-28 ParseError, InternalError...): a jsonrpc.Error.
	cpErrorObject
	// cpEnvelope: a generic JSON-RPC message shape, carried by
	// jsonrpc.Message, whose wire members are jsonrpc, id, method, params,
	// result and error.
	cpEnvelope
	// cpStructural: no struct carries the definition's members one to one;
	// why says what does.
	cpStructural
)

// counterpart is the Go side of one schema definition.
type counterpart struct {
	kind   cpKind
	types  []reflect.Type
	method string   // request and notification definitions
	code   int64    // error definitions
	enum   []string // string enums: the Go constants of every value
	why    string   // structural counterparts: what carries the definition
}

func tt[T any]() reflect.Type { return reflect.TypeFor[T]() }

func direct(ts ...reflect.Type) counterpart { return counterpart{kind: cpDirect, types: ts} }

func request(method string, params reflect.Type) counterpart {
	return counterpart{kind: cpRequest, method: method, types: []reflect.Type{params}}
}

func notification(method string, params reflect.Type) counterpart {
	return counterpart{kind: cpNotification, method: method, types: []reflect.Type{params}}
}

func response(results ...reflect.Type) counterpart {
	return counterpart{kind: cpResponse, types: results}
}

func errorEnvelope(code int64, data reflect.Type) counterpart {
	c := counterpart{kind: cpErrorEnvelope, code: code}
	if data != nil {
		c.types = []reflect.Type{data}
	}
	return c
}

func errorObject(code int64) counterpart {
	return counterpart{kind: cpErrorObject, code: code, types: []reflect.Type{tt[jsonrpc.Error]()}}
}

func envelope(why string) counterpart {
	return counterpart{kind: cpEnvelope, types: []reflect.Type{tt[jsonrpc.Message]()}, why: why}
}

func structural(t reflect.Type, why string) counterpart {
	return counterpart{kind: cpStructural, types: []reflect.Type{t}, why: why}
}

func enumOf(t reflect.Type, why string, values ...string) counterpart {
	return counterpart{kind: cpStructural, types: []reflect.Type{t}, why: why, enum: values}
}

// wireMembers are the members of a JSON-RPC message, written and read by
// package jsonrpc for [jsonrpc.Message].
var wireMembers = map[string]bool{"jsonrpc": true, "id": true, "method": true, "params": true, "result": true, "error": true}

const (
	whyFormSchema = "elicitation form schemas are JSON Schema, kept raw (like tool schemas) in ElicitParams.RequestedSchema; the samples validate every kind"
	whyClientMsg  = "a union of messages: a jsonrpc.Message whose Method (methods.go) selects the params type listed for each member"
)

// counterparts maps every definition of every revision's schema to the Go
// type that carries it. TestSchemaDefinitionsMapped fails on a definition
// missing here, so a new revision's additions are noticed.
var counterparts = map[string]counterpart{
	// JSON-RPC framing.
	"JSONRPCMessage":        envelope("any JSON-RPC message"),
	"JSONRPCRequest":        envelope("a request: jsonrpc.Message with ID and Method"),
	"JSONRPCNotification":   envelope("a notification: jsonrpc.Message with Method and no ID"),
	"JSONRPCResponse":       envelope("a response: jsonrpc.Message with ID and Result or Error"),
	"JSONRPCResultResponse": envelope("a result response: jsonrpc.Message with ID and Result"),
	"JSONRPCErrorResponse":  envelope("an error response: jsonrpc.Message with Error"),
	"JSONRPCError":          envelope("an error response (before 2025-11-25): jsonrpc.Message with Error"),
	"JSONRPCBatchRequest":   structural(tt[jsonrpc.Message](), "batches (2025-03-26 only) are refused by jsonrpc.Decode: no MCP peer uses them and 2025-06-18 removed them"),
	"JSONRPCBatchResponse":  structural(tt[jsonrpc.Message](), "batches (2025-03-26 only) are refused by jsonrpc.Decode: no MCP peer uses them and 2025-06-18 removed them"),
	"Request":               envelope("the base of requests: jsonrpc.Message"),
	"Notification":          envelope("the base of notifications: jsonrpc.Message"),
	"RequestId":             structural(tt[jsonrpc.ID](), "jsonrpc.ID keeps a string or integer id exactly"),
	"Error":                 direct(tt[jsonrpc.Error]()),
	"Result":                direct(tt[ResultFields]()),
	"EmptyResult":           direct(tt[EmptyResult]()),
	"ResultType":            structural(tt[string](), "ResultFields.ResultType, a string with the constants ResultComplete and ResultInputRequired"),
	"Cursor":                structural(tt[Cursor](), "Cursor is an alias of string"),
	"ProgressToken":         structural(tt[ProgressToken](), "ProgressToken is raw JSON (string or integer), echoed exactly"),
	"ClientRequest":         structural(tt[jsonrpc.Message](), whyClientMsg),
	"ServerRequest":         structural(tt[jsonrpc.Message](), whyClientMsg),
	"ClientNotification":    structural(tt[jsonrpc.Message](), whyClientMsg+" (2026-07-28: CancelledNotification alone)"),
	"ServerNotification":    structural(tt[jsonrpc.Message](), whyClientMsg),
	"ClientResult":          structural(tt[jsonrpc.Message](), "a union of results: the result type follows the method of the request answered"),
	"ServerResult":          structural(tt[jsonrpc.Message](), "a union of results: the result type follows the method of the request answered"),

	// Generic JSON and _meta.
	"JSONValue":                           structural(tt[any](), "any JSON value: any (or jsontext.Value where kept raw)"),
	"JSONObject":                          structural(tt[map[string]any](), "any JSON object: map[string]any"),
	"JSONArray":                           structural(tt[[]any](), "any JSON array: []any"),
	"MetaObject":                          structural(tt[Meta](), "Meta, an open map; RequestMeta, ResultMeta and NotificationMeta are typed views"),
	"RequestMetaObject":                   direct(tt[RequestMeta]()),
	"ResultMetaObject":                    direct(tt[ResultMeta]()),
	"NotificationMetaObject":              direct(tt[NotificationMeta]()),
	"SubscriptionsListenResultMetaObject": direct(tt[ResultMeta]()),

	// Errors.
	"ParseError":                           errorObject(jsonrpc.CodeParseError),
	"InvalidRequestError":                  errorObject(jsonrpc.CodeInvalidRequest),
	"MethodNotFoundError":                  errorObject(jsonrpc.CodeMethodNotFound),
	"InvalidParamsError":                   errorObject(jsonrpc.CodeInvalidParams),
	"InternalError":                        errorObject(jsonrpc.CodeInternalError),
	"HeaderMismatchError":                  errorEnvelope(CodeHeaderMismatch, nil),
	"MissingRequiredClientCapabilityError": errorEnvelope(CodeMissingRequiredClientCapability, tt[MissingRequiredClientCapabilityData]()),
	"UnsupportedProtocolVersionError":      errorEnvelope(CodeUnsupportedProtocolVersion, tt[UnsupportedProtocolVersionData]()),
	"URLElicitationRequiredError":          errorEnvelope(CodeURLElicitationRequired, tt[URLElicitationRequiredData]()),

	// Common objects.
	"Role":           enumOf(tt[Role](), "Role with its constants", string(RoleUser), string(RoleAssistant)),
	"Annotations":    direct(tt[Annotations]()),
	"Annotated":      direct(tt[Resource](), tt[ResourceTemplate](), tt[Content]()),
	"BaseMetadata":   direct(tt[Tool](), tt[Prompt](), tt[PromptArgument](), tt[Resource](), tt[ResourceTemplate](), tt[Implementation](), tt[CompleteRef]()),
	"Icon":           direct(tt[Icon]()),
	"Icons":          direct(tt[Tool](), tt[Prompt](), tt[Resource](), tt[ResourceTemplate](), tt[Implementation](), tt[Content]()),
	"Implementation": direct(tt[Implementation]()),

	// Content.
	"ContentBlock":                direct(tt[Content]()),
	"SamplingMessageContentBlock": direct(tt[Content]()),
	"TextContent":                 direct(tt[Content]()),
	"ImageContent":                direct(tt[Content]()),
	"AudioContent":                direct(tt[Content]()),
	"ResourceLink":                direct(tt[Content]()),
	"EmbeddedResource":            direct(tt[Content]()),
	"ToolUseContent":              direct(tt[Content]()),
	"ToolResultContent":           direct(tt[Content]()),
	"ResourceContents":            direct(tt[ResourceContents]()),
	"TextResourceContents":        direct(tt[ResourceContents]()),
	"BlobResourceContents":        direct(tt[ResourceContents]()),

	// Lifecycle (legacy) and discovery (stateless).
	"ClientCapabilities":      direct(tt[ClientCapabilities]()),
	"ServerCapabilities":      direct(tt[ServerCapabilities]()),
	"InitializeRequest":       request(MethodInitialize, tt[InitializeParams]()),
	"InitializeRequestParams": direct(tt[InitializeParams]()),
	"InitializeResult":        direct(tt[InitializeResult]()),
	"InitializedNotification": notification(NotificationInitialized, tt[NotificationParams]()),
	"PingRequest":             request(MethodPing, tt[RequestParams]()),
	"DiscoverRequest":         request(MethodDiscover, tt[RequestParams]()),
	"DiscoverResult":          direct(tt[DiscoverResult]()),
	"DiscoverResultResponse":  response(tt[DiscoverResult]()),
	"RequestParams":           direct(tt[RequestParams]()),
	"NotificationParams":      direct(tt[NotificationParams]()),
	"CacheableResult":         direct(tt[ListToolsResult](), tt[ListPromptsResult](), tt[ListResourcesResult](), tt[ListResourceTemplatesResult](), tt[ReadResourceResult](), tt[DiscoverResult]()),

	// Utilities.
	"CancelledNotification":       notification(NotificationCancelled, tt[CancelledParams]()),
	"CancelledNotificationParams": direct(tt[CancelledParams]()),
	"ProgressNotification":        notification(NotificationProgress, tt[ProgressParams]()),
	"ProgressNotificationParams":  direct(tt[ProgressParams]()),
	"PaginatedRequest":            request("", tt[PaginatedParams]()),
	"PaginatedRequestParams":      direct(tt[PaginatedParams]()),
	"PaginatedResult":             direct(tt[ListToolsResult](), tt[ListPromptsResult](), tt[ListResourcesResult](), tt[ListResourceTemplatesResult](), tt[ListTasksResult]()),

	// Logging.
	"LoggingLevel": enumOf(tt[LoggingLevel](), "LoggingLevel with its constants",
		string(LevelDebug), string(LevelInfo), string(LevelNotice), string(LevelWarning),
		string(LevelError), string(LevelCritical), string(LevelAlert), string(LevelEmergency)),
	"SetLevelRequest":                  request(MethodSetLevel, tt[SetLevelParams]()),
	"SetLevelRequestParams":            direct(tt[SetLevelParams]()),
	"LoggingMessageNotification":       notification(NotificationMessage, tt[LoggingMessageParams]()),
	"LoggingMessageNotificationParams": direct(tt[LoggingMessageParams]()),

	// Tools.
	"Tool":                        direct(tt[Tool]()),
	"ToolAnnotations":             direct(tt[ToolAnnotations]()),
	"ToolExecution":               direct(tt[ToolExecution]()),
	"ListToolsRequest":            request(MethodToolsList, tt[PaginatedParams]()),
	"ListToolsResult":             direct(tt[ListToolsResult]()),
	"ListToolsResultResponse":     response(tt[ListToolsResult]()),
	"CallToolRequest":             request(MethodToolsCall, tt[CallToolParams]()),
	"CallToolRequestParams":       direct(tt[CallToolParams]()),
	"CallToolResult":              direct(tt[CallToolResult]()),
	"CallToolResultResponse":      response(tt[CallToolResult](), tt[InputRequiredResult]()),
	"ToolListChangedNotification": notification(NotificationToolsListChanged, tt[NotificationParams]()),

	// Resources.
	"Resource":                            direct(tt[Resource]()),
	"ResourceTemplate":                    direct(tt[ResourceTemplate]()),
	"ListResourcesRequest":                request(MethodResourcesList, tt[PaginatedParams]()),
	"ListResourcesResult":                 direct(tt[ListResourcesResult]()),
	"ListResourcesResultResponse":         response(tt[ListResourcesResult]()),
	"ListResourceTemplatesRequest":        request(MethodResourcesTemplatesList, tt[PaginatedParams]()),
	"ListResourceTemplatesResult":         direct(tt[ListResourceTemplatesResult]()),
	"ListResourceTemplatesResultResponse": response(tt[ListResourceTemplatesResult]()),
	"ReadResourceRequest":                 request(MethodResourcesRead, tt[ReadResourceParams]()),
	"ReadResourceRequestParams":           direct(tt[ReadResourceParams]()),
	"ReadResourceResult":                  direct(tt[ReadResourceResult]()),
	"ReadResourceResultResponse":          response(tt[ReadResourceResult](), tt[InputRequiredResult]()),
	"ResourceRequestParams":               direct(tt[ReadResourceParams](), tt[SubscribeParams]()),
	"SubscribeRequest":                    request(MethodResourcesSubscribe, tt[SubscribeParams]()),
	"SubscribeRequestParams":              direct(tt[SubscribeParams]()),
	"UnsubscribeRequest":                  request(MethodResourcesUnsubscribe, tt[SubscribeParams]()),
	"UnsubscribeRequestParams":            direct(tt[SubscribeParams]()),
	"ResourceUpdatedNotification":         notification(NotificationResourceUpdated, tt[ResourceUpdatedParams]()),
	"ResourceUpdatedNotificationParams":   direct(tt[ResourceUpdatedParams]()),
	"ResourceListChangedNotification":     notification(NotificationResourcesListChanged, tt[NotificationParams]()),

	// Prompts.
	"Prompt":                        direct(tt[Prompt]()),
	"PromptArgument":                direct(tt[PromptArgument]()),
	"PromptMessage":                 direct(tt[PromptMessage]()),
	"ListPromptsRequest":            request(MethodPromptsList, tt[PaginatedParams]()),
	"ListPromptsResult":             direct(tt[ListPromptsResult]()),
	"ListPromptsResultResponse":     response(tt[ListPromptsResult]()),
	"GetPromptRequest":              request(MethodPromptsGet, tt[GetPromptParams]()),
	"GetPromptRequestParams":        direct(tt[GetPromptParams]()),
	"GetPromptResult":               direct(tt[GetPromptResult]()),
	"GetPromptResultResponse":       response(tt[GetPromptResult](), tt[InputRequiredResult]()),
	"PromptListChangedNotification": notification(NotificationPromptsListChanged, tt[NotificationParams]()),

	// Completion.
	"CompleteRequest":           request(MethodComplete, tt[CompleteParams]()),
	"CompleteRequestParams":     direct(tt[CompleteParams]()),
	"CompleteResult":            direct(tt[CompleteResult]()),
	"CompleteResultResponse":    response(tt[CompleteResult]()),
	"PromptReference":           direct(tt[CompleteRef]()),
	"ResourceReference":         direct(tt[CompleteRef]()),
	"ResourceTemplateReference": direct(tt[CompleteRef]()),

	// Sampling.
	"CreateMessageRequest":       request(MethodCreateMessage, tt[CreateMessageParams]()),
	"CreateMessageRequestParams": direct(tt[CreateMessageParams]()),
	"CreateMessageResult":        direct(tt[CreateMessageResult]()),
	"SamplingMessage":            direct(tt[SamplingMessage]()),
	"ModelPreferences":           direct(tt[ModelPreferences]()),
	"ModelHint":                  direct(tt[ModelHint]()),
	"ToolChoice":                 direct(tt[ToolChoice]()),

	// Elicitation.
	"ElicitRequest":                   request(MethodElicit, tt[ElicitParams]()),
	"ElicitRequestParams":             direct(tt[ElicitParams]()),
	"ElicitRequestFormParams":         direct(tt[ElicitParams]()),
	"ElicitRequestURLParams":          direct(tt[ElicitParams]()),
	"ElicitResult":                    direct(tt[ElicitResult]()),
	"ElicitationCompleteNotification": notification(NotificationElicitationComplete, tt[ElicitationCompleteParams]()),
	"PrimitiveSchemaDefinition":       structural(tt[jsontext.Value](), whyFormSchema),
	"StringSchema":                    structural(tt[jsontext.Value](), whyFormSchema),
	"NumberSchema":                    structural(tt[jsontext.Value](), whyFormSchema),
	"BooleanSchema":                   structural(tt[jsontext.Value](), whyFormSchema),
	"EnumSchema":                      structural(tt[jsontext.Value](), whyFormSchema),
	"SingleSelectEnumSchema":          structural(tt[jsontext.Value](), whyFormSchema),
	"MultiSelectEnumSchema":           structural(tt[jsontext.Value](), whyFormSchema),
	"UntitledSingleSelectEnumSchema":  structural(tt[jsontext.Value](), whyFormSchema),
	"TitledSingleSelectEnumSchema":    structural(tt[jsontext.Value](), whyFormSchema),
	"UntitledMultiSelectEnumSchema":   structural(tt[jsontext.Value](), whyFormSchema),
	"TitledMultiSelectEnumSchema":     structural(tt[jsontext.Value](), whyFormSchema),
	"LegacyTitledEnumSchema":          structural(tt[jsontext.Value](), whyFormSchema),

	// Roots.
	"Root":                         direct(tt[Root]()),
	"ListRootsRequest":             request(MethodListRoots, tt[RequestParams]()),
	"ListRootsResult":              direct(tt[ListRootsResult]()),
	"RootsListChangedNotification": notification(NotificationRootsListChanged, tt[NotificationParams]()),

	// Multi round-trip requests (2026-07-28).
	"InputRequiredResult":        direct(tt[InputRequiredResult]()),
	"InputRequest":               direct(tt[InputRequest]()),
	"InputRequests":              structural(tt[map[string]InputRequest](), "InputRequiredResult.InputRequests"),
	"InputResponse":              structural(tt[jsontext.Value](), "kept raw in MRTRParams.InputResponses: decode it into the CreateMessageResult, ListRootsResult or ElicitResult that the method of the matching InputRequest calls for"),
	"InputResponses":             structural(tt[map[string]jsontext.Value](), "MRTRParams.InputResponses"),
	"InputResponseRequestParams": direct(tt[InputResponseParams](), tt[CallToolParams](), tt[GetPromptParams](), tt[ReadResourceParams]()),

	// Subscriptions (2026-07-28).
	"SubscriptionFilter":                          direct(tt[SubscriptionFilter]()),
	"SubscriptionsListenRequest":                  request(MethodSubscriptionsListen, tt[SubscriptionsListenParams]()),
	"SubscriptionsListenRequestParams":            direct(tt[SubscriptionsListenParams]()),
	"SubscriptionsListenResult":                   direct(tt[SubscriptionsListenResult]()),
	"SubscriptionsListenResultResponse":           response(tt[SubscriptionsListenResult]()),
	"SubscriptionsAcknowledgedNotification":       notification(NotificationSubscriptionsAcknowledged, tt[SubscriptionsAcknowledgedParams]()),
	"SubscriptionsAcknowledgedNotificationParams": direct(tt[SubscriptionsAcknowledgedParams]()),

	// Tasks (2025-11-25).
	"Task":                         direct(tt[Task]()),
	"TaskMetadata":                 direct(tt[TaskMetadata]()),
	"RelatedTaskMetadata":          direct(tt[RelatedTaskMetadata]()),
	"TaskStatus":                   enumOf(tt[string](), "Task.Status, a string with the Task* constants", TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled),
	"TaskAugmentedRequestParams":   direct(tt[CallToolParams](), tt[CreateMessageParams](), tt[ElicitParams]()),
	"CreateTaskResult":             direct(tt[CreateTaskResult]()),
	"GetTaskRequest":               request(MethodTasksGet, tt[TaskIDParams]()),
	"GetTaskResult":                direct(tt[GetTaskResult]()),
	"GetTaskPayloadRequest":        request(MethodTasksResult, tt[TaskIDParams]()),
	"GetTaskPayloadResult":         structural(tt[jsontext.Value](), "the result of the task's original request (a CallToolResult, CreateMessageResult...), decoded into that request's result type"),
	"CancelTaskRequest":            request(MethodTasksCancel, tt[TaskIDParams]()),
	"CancelTaskResult":             direct(tt[GetTaskResult]()),
	"ListTasksRequest":             request(MethodTasksList, tt[PaginatedParams]()),
	"ListTasksResult":              direct(tt[ListTasksResult]()),
	"TaskStatusNotification":       notification(NotificationTaskStatus, tt[TaskStatusParams]()),
	"TaskStatusNotificationParams": direct(tt[TaskStatusParams]()),
}

// goOnlyTypes are exported protocol struct types that no schema definition
// reaches (as counterpart, embedded struct or member type), with the reason.
var goOnlyTypes = map[string]string{
	// The tasks extension (io.modelcontextprotocol/tasks) is specified
	// outside the core schema, in the ext-tasks repository.
	"DetailedTask":     "the tasks extension's Task shapes, not in the core schema",
	"UpdateTaskParams": "the tasks extension's tasks/update, not in the core schema",
}

// goOnlyMembers are JSON members of counterparts that no definition of any
// revision declares, with the reason they exist anyway.
var goOnlyMembers = map[string]string{
	// The tasks extension adds to the core's subscription filter.
	"SubscriptionFilter.taskIds": "the tasks extension's notifications/tasks, outside the core schema",
	// ResultFields is embedded in every result; these results exist only in
	// legacy revisions, where resultType is left unset.
	"CreateTaskResult.resultType": "legacy-only result embedding ResultFields",
	"GetTaskResult.resultType":    "legacy-only result embedding ResultFields",
	"InitializeResult.resultType": "legacy-only result embedding ResultFields",
	// Every request's and notification's params may carry _meta (the base
	// Request and Notification declare params._meta); the generated
	// 2025-11-25 schema lost it from these inline params.
	"TaskIDParams._meta":              "params._meta of every request (Request.params)",
	"ElicitationCompleteParams._meta": "params._meta of every notification (Notification.params)",
}
